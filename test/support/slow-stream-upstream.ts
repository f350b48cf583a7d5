import { startFakeServer } from '../fake-upstreams/json-fake-server.js';

export interface SlowStreamUpstream {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * An OpenAI-compatible upstream whose chat streams send `chunks` chunks, one every `intervalMs`
 * (chunk n says `n `), so that a signal can land while a stream is under way.
 */
export function slowStreamUpstream(chunks: number, intervalMs: number): Promise<SlowStreamUpstream> {
  return startFakeServer((_incoming, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    let sent = 0;
    const timer = setInterval(() => {
      const delta = {
        id: 'c',
        object: 'chat.completion.chunk',
        created: 0,
        model: 'slow',
        choices: [{ index: 0, delta: { content: `${sent} ` }, finish_reason: null }],
      };
      response.write(`data: ${JSON.stringify(delta)}\n\n`);
      sent += 1;
      if (sent < chunks) return;
      clearInterval(timer);
      response.end('data: [DONE]\n\n');
    }, intervalMs);
    response.once('close', () => clearInterval(timer));
  });
}
