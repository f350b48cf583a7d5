import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One exchange as the client saw it: what it sent and what it got, bytes as they crossed. */
export interface RecordedExchange {
  method: string;
  path: string;
  requestHeaders: IncomingHttpHeaders;
  requestBody: Buffer;
  status: number;
  responseHeaders: IncomingHttpHeaders;
  responseBody: Buffer;
}

export interface RecordingProxy {
  /** `http://127.0.0.1:PORT`: point the client here instead of at the target. */
  readonly url: string;
  readonly exchanges: RecordedExchange[];
  close(): Promise<void>;
}

/**
 * An HTTP relay in front of `target` that records every request and response body exactly as it
 * passed (after HTTP framing, before any decoding), so a test can compare what a real client sent
 * and received with what the upstream behind the gateway received and sent.
 */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const base = new URL(target);
  const exchanges: RecordedExchange[] = [];
  const server: Server = createServer((incoming, outgoing) => {
    const requestChunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => requestChunks.push(chunk));
    incoming.on('end', () => {
      const requestBody = Buffer.concat(requestChunks);
      const forwarded = httpRequest(
        { host: base.hostname, port: base.port, method: incoming.method, path: incoming.url, headers: { ...incoming.headers, host: base.host } },
        (answer) => {
          const responseChunks: Buffer[] = [];
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.on('data', (chunk: Buffer) => {
            responseChunks.push(chunk);
            outgoing.write(chunk);
          });
          const record = (): void => {
            exchanges.push({
              method: incoming.method ?? '',
              path: incoming.url ?? '',
              requestHeaders: incoming.headers,
              requestBody,
              status: answer.statusCode ?? 0,
              responseHeaders: answer.headers,
              responseBody: Buffer.concat(responseChunks),
            });
          };
          answer.on('end', () => {
            record();
            outgoing.end();
          });
          answer.on('error', () => {
            record();
            outgoing.destroy();
          });
        },
      );
      forwarded.on('error', () => outgoing.destroy());
      forwarded.end(requestBody);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
