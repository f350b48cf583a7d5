import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SlowStreamUpstream {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * An OpenAI-compatible upstream whose chat streams send `chunks` chunks, one every `intervalMs`
 * (chunk n says `n `), so that a signal can land while a stream is under way.
 */
export function slowStreamUpstream(chunks: number, intervalMs: number): Promise<SlowStreamUpstream> {
  const server = createServer((incoming, response) => {
    incoming.resume();
    incoming.once('end', () => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      let sent = 0;
      const timer = setInterval(() => {
        const delta = { id: 'c', object: 'chat.completion.chunk', created: 0, model: 'slow', choices: [{ index: 0, delta: { content: `${sent} ` }, finish_reason: null }] };
        response.write(`data: ${JSON.stringify(delta)}\n\n`);
        sent += 1;
        if (sent < chunks) return;
        clearInterval(timer);
        response.end('data: [DONE]\n\n');
      }, intervalMs);
      response.once('close', () => clearInterval(timer));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: async () => {
          server.closeAllConnections();
          await new Promise((closed) => server.close(closed));
        },
      }),
    ),
  );
}
