import type { IncomingHttpHeaders } from 'node:http';
import { createSecureServer, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { TestCertificates } from './test-certificates.js';

/** One request as the upstream saw it (its body only once the handler reads it, see `readBody`). */
export interface SeenRequest {
  method: string;
  path: string;
  /** '1.1' or '2.0', as ALPN chose. */
  httpVersion: string;
  headers: IncomingHttpHeaders;
  /** The common name of the client certificate, when one was presented and verified. */
  clientCertificate: string | null;
}

/** What a test's behaviour gets for each request: Node's compatibility API, the same for HTTP/1.1 and HTTP/2. */
export interface Exchange {
  readonly request: Http2ServerRequest;
  readonly response: Http2ServerResponse;
  readonly seen: SeenRequest;
  /** Reads the request body whole. */
  readBody(): Promise<Buffer>;
  /** Resolves when the response was cut short: the client reset the stream or closed the connection. */
  readonly cancelled: Promise<void>;
}

export interface TlsTestUpstream {
  readonly origin: URL;
  readonly port: number;
  /** TLS connections established so far. */
  readonly connectionCount: number;
  /** Connections open now (TCP). */
  readonly openConnections: number;
  readonly requests: SeenRequest[];
  /** How the next requests are answered. */
  behaviour: (exchange: Exchange) => void;
  /** Resets every open TCP connection (RST), whatever protocol it carries. */
  resetConnections(): void;
  /** Closes every HTTP/2 session gracefully (GOAWAY) and ends every HTTP/1.1 connection. */
  endConnections(): void;
  close(): Promise<void>;
}

/**
 * An https upstream for transport tests, signed by the test CA: it offers `h2` and `http/1.1` by
 * ALPN (so each transport speaks its own protocol to the same server), asks for a client
 * certificate without requiring one, and answers with the current `behaviour`.
 */
export async function startTlsTestUpstream(certificates: TestCertificates): Promise<TlsTestUpstream> {
  const { read } = certificates;
  const server = createSecureServer({
    allowHTTP1: true,
    key: read(certificates.serverKeyFile),
    cert: read(certificates.serverCertFile),
    ca: read(certificates.caFile),
    requestCert: true,
    rejectUnauthorized: false,
  });
  const sockets = new Set<Socket>();
  const sessions = new Set<ServerHttp2Session>();
  let connectionCount = 0;
  const requests: SeenRequest[] = [];
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('secureConnection', () => connectionCount++);
  server.on('session', (session: ServerHttp2Session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  server.on('tlsClientError', () => undefined);
  const upstream: TlsTestUpstream = {
    origin: new URL('https://127.0.0.1'),
    port: 0,
    get connectionCount() {
      return connectionCount;
    },
    get openConnections() {
      return sockets.size;
    },
    requests,
    behaviour: ({ response }) => response.end(),
    resetConnections() {
      for (const socket of sockets) socket.resetAndDestroy();
    },
    endConnections() {
      for (const session of sessions) session.close();
      for (const socket of sockets) if ((socket as TLSSocket).alpnProtocol !== 'h2') socket.end();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  server.on('request', (request: Http2ServerRequest, response: Http2ServerResponse) => {
    const socket = (request.httpVersion === '2.0' ? request.stream.session?.socket : request.socket) as TLSSocket;
    const peer = socket.getPeerCertificate();
    const seen: SeenRequest = {
      method: request.method,
      path: request.url,
      httpVersion: request.httpVersion,
      headers: request.headers,
      clientCertificate: socket.authorized && peer.subject !== undefined ? String(peer.subject.CN) : null,
    };
    requests.push(seen);
    // HTTP/2 tells a reset stream at once ('aborted'); the response closes only once its buffered writes are dropped.
    const cancelled = new Promise<void>((resolve) => {
      request.on('aborted', () => resolve());
      response.on('close', () => (response.writableEnded ? undefined : resolve()));
    });
    const readBody = async (): Promise<Buffer> => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    };
    upstream.behaviour({ request, response, seen, readBody, cancelled });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  Object.assign(upstream, { port, origin: new URL(`https://127.0.0.1:${port}`) });
  return upstream;
}
