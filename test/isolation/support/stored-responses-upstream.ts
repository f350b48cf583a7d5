import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';

export interface StoredResponsesUpstream {
  readonly url: string;
  /** Chat completion requests answered. */
  readonly answered: () => number;
  /** The size of the last request body: what the gateway resolved a conversation to. */
  readonly lastBodyBytes: () => number;
  close(): Promise<void>;
}

/**
 * A chat completions upstream (any path, Azure's included) that reads and drops the whole body, then
 * answers one short completion: the gateway converts `/v1/responses` to it and stores what it made,
 * which is all the stored-responses suite needs. node:http only, so nothing else holds the big bodies.
 */
export async function startStoredResponsesUpstream(): Promise<StoredResponsesUpstream> {
  let answered = 0;
  let lastBodyBytes = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((incoming, outgoing) => {
    let bytes = 0;
    incoming.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    incoming.once('end', () => {
      answered += 1;
      lastBodyBytes = bytes;
      const completion = {
        id: 'chatcmpl-stored',
        object: 'chat.completion',
        created: 1,
        model: 'chat',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Noted.' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
      };
      outgoing.writeHead(200, { 'content-type': 'application/json' });
      outgoing.end(JSON.stringify(completion));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    answered: () => answered,
    lastBodyBytes: () => lastBodyBytes,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
