import { createServer as createHttpServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { Http1Call, Http1Handler, Http1Request } from './http1-call.js';
import { Http1Pool, type Http1PoolOptions } from './http1-pool.js';
import type { ResponseHead } from './response-parser.js';

// What the in-house HTTP/1.1 pool does beyond the Transport contract (transport-contract.test.ts
// runs the cases both transports share: keep-alive, aborts, pause and resume, timeouts, TLS,
// proxies, faults): its framing, queueing, retries and request checks, against exact bytes.

// ---------------------------------------------------------------------------------------------
// Servers and pools, closed after each test.

interface ListeningServer {
  port: number;
  origin: URL;
  /** TCP connections accepted so far. */
  connectionCount: number;
  readonly sockets: Set<Socket>;
}

interface HttpServer extends ListeningServer {
  server: Server;
  /** Requests received, with their bodies, in the order they ended. */
  readonly requests: ReceivedRequest[];
}

interface ReceivedRequest {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Which TCP connection (0, 1…) carried it. */
  connectionIndex: number;
}

const cleanUps: (() => Promise<void> | void)[] = [];
const pools: Http1Pool[] = [];

afterEach(async () => {
  // Closing first stops a pool from retrying or reconnecting while the servers go away.
  const closing = pools.splice(0).map((pool) => pool.close());
  for (const cleanUp of cleanUps.splice(0).reverse()) await cleanUp();
  await Promise.all(closing);
});

function newPool(origin: URL, options: Partial<Http1PoolOptions> = {}): Http1Pool {
  const pool = new Http1Pool(origin, { maxConnections: 4, connectTimeoutMs: 1_000, keepAliveMs: 10_000, ...options });
  pools.push(pool);
  return pool;
}

function trackConnections(server: NetServer, tracked: ListeningServer): void {
  server.on('connection', (socket: Socket) => {
    tracked.connectionCount++;
    tracked.sockets.add(socket);
    socket.on('close', () => tracked.sockets.delete(socket));
  });
}

async function listen(server: NetServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('the server has no address');
  return address.port;
}

function closeServer(server: NetServer, sockets: Set<Socket>): Promise<void> {
  for (const socket of sockets) socket.destroy();
  return new Promise<void>((resolve) => server.close(() => resolve()));
}

type RequestListener = (request: IncomingMessage, response: ServerResponse, received: ReceivedRequest) => void;

/**
 * A node:http server that reads each request's body, records it, then hands it to `listener`.
 * `delayReadingMs` leaves each body unread for that long first (the upstream's buffers fill up).
 */
async function startHttpServer(listener: RequestListener, { delayReadingMs = 0 } = {}): Promise<HttpServer> {
  const server = createHttpServer();
  const tracked: HttpServer = { server, port: 0, origin: new URL('http://127.0.0.1'), connectionCount: 0, sockets: new Set(), requests: [] };
  trackConnections(server, tracked);
  const connectionIndexes = new WeakMap<Socket, number>();
  server.on('connection', (socket: Socket) => connectionIndexes.set(socket, tracked.connectionCount - 1));
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    if (delayReadingMs > 0) {
      request.pause();
      setTimeout(() => request.resume(), delayReadingMs);
    }
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received: ReceivedRequest = {
        method: request.method,
        url: request.url,
        headers: request.headers,
        body: Buffer.concat(chunks),
        connectionIndex: connectionIndexes.get(request.socket) ?? -1,
      };
      tracked.requests.push(received);
      listener(request, response, received);
    });
  });
  tracked.port = await listen(server);
  tracked.origin = new URL(`http://127.0.0.1:${tracked.port}`);
  cleanUps.push(() => {
    server.closeAllConnections();
    return closeServer(server, tracked.sockets);
  });
  return tracked;
}

interface RawServer extends ListeningServer {
  /** Every byte each connection sent, by connection index. */
  readonly received: Buffer[];
}

/** A node:net server for exact bytes: `onData` sees each connection's bytes as they arrive. */
async function startRawServer(onData: (socket: Socket, connectionIndex: number, data: Buffer) => void): Promise<RawServer> {
  const server = createNetServer();
  const tracked: RawServer = { port: 0, origin: new URL('http://127.0.0.1'), connectionCount: 0, sockets: new Set(), received: [] };
  trackConnections(server, tracked);
  server.on('connection', (socket: Socket) => {
    const index = tracked.connectionCount - 1;
    tracked.received[index] = Buffer.alloc(0);
    socket.on('error', () => undefined);
    socket.on('data', (data: Buffer) => {
      tracked.received[index] = Buffer.concat([tracked.received[index] ?? Buffer.alloc(0), data]);
      onData(socket, index, data);
    });
  });
  tracked.port = await listen(server);
  tracked.origin = new URL(`http://127.0.0.1:${tracked.port}`);
  cleanUps.push(() => closeServer(server, tracked.sockets));
  return tracked;
}

/** The length of the first complete request in `buffer` (Content-Length or chunked body), or -1. */
function completeRequestLength(buffer: Buffer): number {
  const headEnd = buffer.indexOf('\r\n\r\n');
  if (headEnd === -1) return -1;
  const head = buffer.toString('latin1', 0, headEnd);
  const bodyStart = headEnd + 4;
  const length = /\r\ncontent-length: *(\d+)/i.exec(head);
  if (length !== null) return buffer.length >= bodyStart + Number(length[1]) ? bodyStart + Number(length[1]) : -1;
  if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
    const end = buffer.indexOf('\r\n0\r\n\r\n', bodyStart - 2);
    return end === -1 ? -1 : end + 7;
  }
  return bodyStart;
}

/** Raw server behaviour: answers every complete request on a connection with `response`. */
function answerEveryRequest(response: string): (socket: Socket, connectionIndex: number, data: Buffer) => void {
  const pending = new Map<Socket, Buffer>();
  return (socket, _connectionIndex, data) => {
    let buffer = Buffer.concat([pending.get(socket) ?? Buffer.alloc(0), data]);
    for (let length = completeRequestLength(buffer); length !== -1; length = completeRequestLength(buffer)) {
      socket.write(response);
      buffer = buffer.subarray(length);
    }
    pending.set(socket, buffer);
  };
}

// ---------------------------------------------------------------------------------------------
// Calls.

/** Records what a call reports; `settled` resolves on its end or its error. */
class RecordingHandler implements Http1Handler {
  readonly events: string[] = [];
  statusCode: number | null = null;
  head: ResponseHead | null = null;
  readonly chunks: Buffer[] = [];
  error: Error | null = null;
  requestSentCount = 0;
  /** Called for each body chunk, after it is recorded. */
  onData: ((chunk: Buffer) => void) | null = null;
  readonly settled: Promise<void>;
  private settle: () => void = () => undefined;

  constructor() {
    this.settled = new Promise<void>((resolve) => {
      this.settle = resolve;
    });
  }

  get body(): string {
    return Buffer.concat(this.chunks).toString();
  }

  get errorCode(): unknown {
    return this.error === null ? undefined : (this.error as NodeJS.ErrnoException).code;
  }

  onRequestSent(): void {
    this.requestSentCount++;
    if (this.events.at(-1) !== 'sent') this.events.push('sent');
  }

  onResponseStart(statusCode: number, head: ResponseHead): void {
    this.events.push('start');
    this.statusCode = statusCode;
    this.head = head;
  }

  onResponseData(chunk: Buffer): void {
    if (this.events.at(-1) !== 'data') this.events.push('data');
    this.chunks.push(Buffer.from(chunk));
    this.onData?.(chunk);
  }

  onResponseEnd(): void {
    this.events.push('end');
    this.settle();
  }

  onResponseError(error: Error): void {
    this.events.push('error');
    this.error = error;
    this.settle();
  }
}

interface StartedCall {
  call: Http1Call;
  handler: RecordingHandler;
}

function start(pool: Http1Pool, request: Partial<Http1Request> = {}): StartedCall {
  const handler = new RecordingHandler();
  const call = pool.dispatch({ method: 'GET', path: '/', headers: {}, body: null, ...request }, handler);
  return { call, handler };
}

/** Dispatches a call and waits for it to settle. */
async function send(pool: Http1Pool, request: Partial<Http1Request> = {}): Promise<RecordingHandler> {
  const { handler } = start(pool, request);
  await handler.settled;
  return handler;
}

async function succeeded(pool: Http1Pool, request: Partial<Http1Request> = {}): Promise<RecordingHandler> {
  const handler = await send(pool, request);
  expect(handler.error).toBeNull();
  expect(handler.events.at(-1)).toBe('end');
  return handler;
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 1_500): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** A port nothing listens on: one a server had a moment ago. */
async function closedPort(): Promise<number> {
  const server = createNetServer();
  const port = await listen(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function ok(response: ServerResponse, body = 'ok'): void {
  response.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

// ---------------------------------------------------------------------------------------------

describe('Http1Pool requests and responses', () => {
  it('writes the host, content-length and transfer-encoding headers itself', async () => {
    const upstream = await startHttpServer((_request, response) => ok(response));
    const pool = newPool(upstream.origin);
    await succeeded(pool, {
      method: 'POST',
      headers: { Host: 'evil.example', 'Content-Length': '999', 'transfer-encoding': 'chunked', connection: 'close' },
      body: 'four',
    });
    const [received] = upstream.requests;
    expect(received?.headers['host']).toBe(`127.0.0.1:${upstream.port}`);
    expect(received?.headers['content-length']).toBe('4');
    expect(received?.headers['transfer-encoding']).toBeUndefined();
    expect(received?.body.toString()).toBe('four');
  });

  it('sends a GET without a body and without framing headers', async () => {
    const upstream = await startHttpServer((_request, response) => ok(response, 'got it'));
    const pool = newPool(upstream.origin);
    const handler = await succeeded(pool, { method: 'GET', path: '/v1/models' });
    const [received] = upstream.requests;
    expect(received?.method).toBe('GET');
    expect(received?.url).toBe('/v1/models');
    expect(received?.headers['content-length']).toBeUndefined();
    expect(received?.headers['transfer-encoding']).toBeUndefined();
    expect(handler.statusCode).toBe(200);
    expect(handler.body).toBe('got it');
  });

  it('sends a Buffer body byte for byte', async () => {
    const upstream = await startHttpServer((_request, response, received) => ok(response, String(received.body.length)));
    const pool = newPool(upstream.origin);
    const body = Buffer.from(Array.from({ length: 512 }, (_, index) => (index * 7) % 256));
    const handler = await succeeded(pool, { method: 'POST', path: '/upload', headers: { 'content-type': 'application/octet-stream' }, body });
    const [received] = upstream.requests;
    expect(received?.headers['content-length']).toBe('512');
    expect(received?.body.equals(body)).toBe(true);
    expect(handler.body).toBe('512');
  });

  it('streams a Readable body without a length as chunked, which node:http decodes', async () => {
    const upstream = await startHttpServer((_request, response, received) => ok(response, String(received.body.length)));
    const pool = newPool(upstream.origin);
    async function* parts(): AsyncGenerator<Buffer> {
      for (let index = 0; index < 5; index++) {
        yield Buffer.from(`part ${index} ${'x'.repeat(index * 100)};`);
        await sleep(2);
      }
    }
    const expected = Array.from({ length: 5 }, (_, index) => `part ${index} ${'x'.repeat(index * 100)};`).join('');
    const handler = await succeeded(pool, { method: 'POST', body: Readable.from(parts()) });
    const [received] = upstream.requests;
    expect(received?.headers['transfer-encoding']).toBe('chunked');
    expect(received?.headers['content-length']).toBeUndefined();
    expect(received?.body.toString()).toBe(expected);
    expect(handler.body).toBe(String(expected.length));
    // The connection is still in step: a second call on it works.
    await succeeded(pool, { method: 'POST', body: Readable.from([Buffer.from('again')]) });
    expect(upstream.requests[1]?.body.toString()).toBe('again');
    expect(upstream.connectionCount).toBe(1);
  });

  it('streams a Readable body with a content-length to an upstream that reads slower than it is sent', async () => {
    const upstream = await startHttpServer((_request, response, received) => ok(response, String(received.body.length)), { delayReadingMs: 150 });
    const pool = newPool(upstream.origin);
    const part = Buffer.alloc(64 * 1024, 'x');
    const partCount = 128;
    const handler = await send(pool, {
      method: 'POST',
      headers: { 'content-length': String(part.length * partCount) },
      body: Readable.from(Array.from({ length: partCount }, () => part)),
    });
    expect(handler.error).toBeNull();
    expect(handler.statusCode).toBe(200);
    expect(handler.body).toBe(String(part.length * partCount));
  });

  it('streams a chunked Readable body to an upstream that reads slower than it is sent', async () => {
    const upstream = await startHttpServer((_request, response, received) => ok(response, String(received.body.length)), { delayReadingMs: 150 });
    const pool = newPool(upstream.origin);
    const part = Buffer.alloc(64 * 1024, 'x');
    const partCount = 128;
    const handler = await send(pool, { method: 'POST', body: Readable.from(Array.from({ length: partCount }, () => part)) });
    expect(handler.error).toBeNull();
    expect(handler.statusCode).toBe(200);
    expect(handler.body).toBe(String(part.length * partCount));
  });

  it('fails a call whose Readable body fails, with code HTTP1_BODY', async () => {
    const upstream = await startHttpServer((_request, response) => ok(response));
    const pool = newPool(upstream.origin);
    async function* failing(): AsyncGenerator<Buffer> {
      yield Buffer.from('some bytes');
      await sleep(5);
      throw new Error('disk on fire');
    }
    const handler = await send(pool, { method: 'POST', body: Readable.from(failing()) });
    expect(handler.errorCode).toBe('HTTP1_BODY');
    expect(handler.error?.message).toMatch(/disk on fire/);
    expect(handler.events).not.toContain('end');
    await waitFor(() => pool.size === 0, 'the connection to close');
  });

  it('fails a Readable body longer or shorter than its content-length with HTTP1_BODY, and sends no extra byte', async () => {
    const upstream = await startHttpServer((_request, response) => ok(response));
    const pool = newPool(upstream.origin);
    const tooLong = await send(pool, {
      method: 'POST',
      headers: { 'content-length': '5' },
      body: Readable.from([Buffer.from('hello'), Buffer.from(' world')]),
    });
    expect(tooLong.errorCode).toBe('HTTP1_BODY');
    expect(tooLong.error?.message).toMatch(/not the 5 bytes/);
    const tooShort = await send(pool, { method: 'POST', headers: { 'content-length': '50' }, body: Readable.from([Buffer.from('hello')]) });
    expect(tooShort.errorCode).toBe('HTTP1_BODY');
    // Neither reached the upstream's handler as a request of its own.
    expect(upstream.requests.map((request) => request.body.toString())).not.toContain(' world');
    await waitFor(() => pool.size === 0, 'both connections to close');
  });

  it('sends a chunked body made of strings and empty chunks byte for byte', async () => {
    const upstream = await startHttpServer((_request, response, received) => ok(response, received.body.toString('utf8')));
    const pool = newPool(upstream.origin);
    const parts = ['héllo ', '', 'wörld ', Buffer.alloc(0), '✓'];
    const handler = await succeeded(pool, { method: 'POST', body: Readable.from(parts, { objectMode: true }) });
    expect(handler.body).toBe('héllo wörld ✓');
    expect(upstream.requests[0]?.headers['transfer-encoding']).toBe('chunked');
  });

  it('delivers an answer sent before the streamed body was read, closes that body and does not reuse the connection', async () => {
    // Answers 413 as soon as the head arrives, without reading the body.
    const upstream = await startRawServer((socket, _index, data) => {
      if (data.includes('\r\n\r\n')) socket.write('HTTP/1.1 413 Payload Too Large\r\nContent-Length: 8\r\n\r\ntoo big!');
    });
    const pool = newPool(upstream.origin);
    let produced = 0;
    async function* endless(): AsyncGenerator<Buffer> {
      for (;;) {
        produced++;
        yield Buffer.alloc(64 * 1024, 'x');
        await sleep(1);
      }
    }
    const body = Readable.from(endless());
    const handler = await send(pool, { method: 'POST', headers: { 'content-length': String(1024 * 1024 * 1024) }, body });
    expect(handler.statusCode).toBe(413);
    expect(handler.body).toBe('too big!');
    await waitFor(() => body.destroyed, 'the request body to be closed');
    // A generator paused in its own await takes one more step before it sees the close.
    await sleep(20);
    const producedAtEnd = produced;
    await sleep(30);
    expect(produced).toBe(producedAtEnd);
    await waitFor(() => pool.size === 0, 'the connection to close');
  });

  it('decodes a chunked response body written in several parts', async () => {
    const upstream = await startHttpServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: one\n\n');
      setTimeout(() => response.end('data: two\n\n'), 10);
    });
    const pool = newPool(upstream.origin);
    const handler = await succeeded(pool);
    expect(handler.head?.headers['transfer-encoding']).toBe('chunked');
    expect(handler.body).toBe('data: one\n\ndata: two\n\n');
  });

  it('fails a call whose response is malformed, with code HTTP1_PROTOCOL, and drops the connection', async () => {
    const upstream = await startRawServer(answerEveryRequest('HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!'));
    const pool = newPool(upstream.origin);
    const handler = await send(pool);
    expect(handler.errorCode).toBe('HTTP1_PROTOCOL');
    await waitFor(() => pool.size === 0, 'the connection to close');
  });
});

describe('Http1Pool connection reuse', () => {
  it('writes the requests dispatched in one turn at the end of that turn, and none of a call aborted before then', async () => {
    const upstream = await startHttpServer((_request, response) => ok(response));
    const pool = newPool(upstream.origin, { maxConnections: 3 });
    // Three idle connections, so that all three calls below are bound at once.
    await Promise.all([send(pool), send(pool), send(pool)]);
    expect(pool.size).toBe(3);
    const calls = [start(pool, { path: '/one' }), start(pool, { path: '/two' }), start(pool, { path: '/three' })];
    expect(calls.map(({ handler }) => handler.requestSentCount)).toEqual([0, 0, 0]);
    calls[1]?.call.abort(new Error('changed my mind'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls.map(({ handler }) => handler.requestSentCount)).toEqual([1, 0, 1]);
    await Promise.all(calls.map(({ handler }) => handler.settled));
    expect(calls[1]?.handler.error?.message).toBe('changed my mind');
    // Two connections: the order the server sees them in is its own.
    expect(upstream.requests.map((request) => request.url).sort()).toEqual(['/', '/', '/', '/one', '/three']);
  });

  it('opens no more than maxConnections for concurrent calls, and serves them all', async () => {
    const upstream = await startHttpServer((request, response) => {
      setTimeout(() => ok(response, request.url ?? ''), 20);
    });
    const pool = newPool(upstream.origin, { maxConnections: 2 });
    let largestSize = 0;
    const calls = Array.from({ length: 10 }, (_, index) => {
      const started = start(pool, { path: `/concurrent/${index}` });
      largestSize = Math.max(largestSize, pool.size);
      return started;
    });
    await Promise.all(calls.map(({ handler }) => handler.settled));
    calls.forEach(({ handler }, index) => {
      expect(handler.error).toBeNull();
      expect(handler.body).toBe(`/concurrent/${index}`);
    });
    expect(largestSize).toBe(2);
    expect(upstream.connectionCount).toBe(2);
    expect(pool.size).toBe(2);
    expect(new Set(upstream.requests.map(({ connectionIndex }) => connectionIndex))).toEqual(new Set([0, 1]));
  });

  /** Answers the first request on each connection; destroys the connection at the first byte of a second one. */
  function answerOnceThenHangUp(): (socket: Socket, connectionIndex: number, data: Buffer) => void {
    const state = new Map<Socket, { buffer: Buffer; answered: boolean }>();
    return (socket, _connectionIndex, data) => {
      const connection = state.get(socket) ?? { buffer: Buffer.alloc(0), answered: false };
      state.set(socket, connection);
      if (connection.answered) {
        socket.destroy();
        return;
      }
      connection.buffer = Buffer.concat([connection.buffer, data]);
      if (completeRequestLength(connection.buffer) === -1) return;
      connection.answered = true;
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nanswered');
    };
  }

  it('sends a GET once more on a new connection when a reused one closes before answering', async () => {
    const upstream = await startRawServer(answerOnceThenHangUp());
    const pool = newPool(upstream.origin);
    await succeeded(pool, { method: 'POST', body: 'first' });
    expect(upstream.connectionCount).toBe(1);

    const handler = await succeeded(pool, { method: 'GET', path: '/second' });
    expect(handler.statusCode).toBe(200);
    expect(handler.body).toBe('answered');
    expect(upstream.connectionCount).toBe(2);
    expect(upstream.received[0]?.toString()).toContain('GET /second HTTP/1.1');
    expect(upstream.received[1]?.toString()).toMatch(/^GET \/second HTTP\/1\.1\r\n/);
  });

  it('never sends a POST twice, even when a reused connection closes before answering: the upstream may have read it', async () => {
    const upstream = await startRawServer(answerOnceThenHangUp());
    const pool = newPool(upstream.origin);
    await succeeded(pool, { method: 'POST', body: 'first' });

    for (const body of ['second', Buffer.from('second')]) {
      const handler = await send(pool, { method: 'POST', path: '/second', body });
      expect(['ECONNRESET', 'EPIPE', 'HTTP1_SOCKET_CLOSED']).toContain(handler.errorCode);
      expect(handler.events).not.toContain('start');
      // Make the next call reuse a connection again.
      await succeeded(pool, { method: 'POST', body: 'first' });
    }
    const seconds = upstream.received.filter((data) => data.toString().includes('POST /second HTTP/1.1'));
    expect(seconds).toHaveLength(2);
  });

  it('does not send a Readable-body call again when a reused connection closes before answering', async () => {
    const upstream = await startRawServer(answerOnceThenHangUp());
    const pool = newPool(upstream.origin);
    await succeeded(pool, { method: 'POST', body: 'first' });

    const handler = await send(pool, { method: 'POST', path: '/streamed', headers: { 'content-length': '8' }, body: Readable.from([Buffer.from('streamed')]) });
    expect(handler.error).not.toBeNull();
    expect(['ECONNRESET', 'EPIPE', 'HTTP1_SOCKET_CLOSED']).toContain(handler.errorCode);
    expect(handler.events).not.toContain('start');
    await sleep(20);
    expect(upstream.connectionCount).toBe(1);
    expect(pool.size).toBe(0);
  });

  it('does not send a call again on a fresh connection that closes before answering', async () => {
    const upstream = await startRawServer((socket) => socket.destroy());
    const pool = newPool(upstream.origin);
    const handler = await send(pool, { method: 'POST', body: 'once' });
    expect(['ECONNRESET', 'EPIPE', 'HTTP1_SOCKET_CLOSED']).toContain(handler.errorCode);
    await sleep(20);
    expect(upstream.connectionCount).toBe(1);
  });

  it('does not reuse a connection whose response said Connection: close', async () => {
    const upstream = await startHttpServer((request, response) => {
      if (request.url === '/closing') response.setHeader('connection', 'close');
      ok(response);
    });
    const pool = newPool(upstream.origin);
    await succeeded(pool, { path: '/closing' });
    await waitFor(() => pool.size === 0, 'the pool to drop the connection');
    await succeeded(pool, { path: '/after' });
    await succeeded(pool, { path: '/after-again' });
    expect(upstream.connectionCount).toBe(2);
    expect(upstream.requests.map(({ connectionIndex }) => connectionIndex)).toEqual([0, 1, 1]);
  });

  it('does not reuse a connection idle for longer than the upstream said it keeps one', async () => {
    const upstream = await startRawServer(answerEveryRequest('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=1\r\nContent-Length: 2\r\n\r\nok'));
    const pool = newPool(upstream.origin, { keepAliveMs: 60_000 });
    await succeeded(pool);
    await sleep(1_100);
    await succeeded(pool);
    expect(upstream.connectionCount).toBe(2);
  });
});

describe('Http1Pool connection failures', () => {
  it('fails every waiting call when connections are refused', async () => {
    const port = await closedPort();
    const pool = newPool(new URL(`http://127.0.0.1:${port}`), { maxConnections: 1 });
    const handlers = Array.from({ length: 3 }, () => start(pool).handler);
    await Promise.all(handlers.map(({ settled }) => settled));
    expect(handlers.map(({ errorCode }) => errorCode)).toEqual(['ECONNREFUSED', 'ECONNREFUSED', 'ECONNREFUSED']);
    expect(pool.size).toBe(0);
  });
});

describe('Http1Pool abort of a waiting call', () => {
  it('aborts a call still waiting for a connection: it is never sent', async () => {
    const held: ServerResponse[] = [];
    const upstream = await startHttpServer((_request, response) => held.push(response));
    const pool = newPool(upstream.origin, { maxConnections: 1 });
    const first = start(pool, { path: '/first' });
    const waiting = start(pool, { path: '/waiting' });
    await waitFor(() => held.length === 1, 'the first request to reach the upstream');
    const reason = new Error('not needed any more');
    waiting.call.abort(reason);
    expect(waiting.handler.error).toBe(reason);
    expect(waiting.handler.events).toEqual(['error']);

    const third = start(pool, { path: '/third' });
    ok(held[0] as ServerResponse, 'first');
    await first.handler.settled;
    expect(first.handler.body).toBe('first');
    await waitFor(() => held.length === 2, 'the third request to reach the upstream');
    ok(held[1] as ServerResponse, 'third');
    await third.handler.settled;
    expect(third.handler.body).toBe('third');
    expect(upstream.requests.map(({ url }) => url)).toEqual(['/first', '/third']);
    expect(waiting.handler.events).toEqual(['error']);
    expect(upstream.connectionCount).toBe(1);
  });

  it('aborts a call waiting for its first connection, which then stays idle for the next call', async () => {
    const upstream = await startHttpServer((_request, response) => ok(response));
    const pool = newPool(upstream.origin);
    const { call, handler } = start(pool);
    call.abort(new Error('changed my mind'));
    expect(handler.events).toEqual(['error']);
    await waitFor(() => upstream.connectionCount === 1, 'the connection to open');
    await succeeded(pool);
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.connectionCount).toBe(1);
  });
});

describe('Http1Pool close', () => {
  it('fails waiting calls with HTTP1_POOL_CLOSED, lets the call in flight finish, then resolves', async () => {
    const held: ServerResponse[] = [];
    const upstream = await startHttpServer((_request, response) => held.push(response));
    const pool = newPool(upstream.origin, { maxConnections: 1 });
    const inFlight = start(pool, { path: '/in-flight' });
    await waitFor(() => held.length === 1, 'the first request to reach the upstream');
    const waiting = [start(pool, { path: '/waiting-1' }), start(pool, { path: '/waiting-2' })];

    let closed = false;
    const closing = pool.close().then(() => {
      closed = true;
    });
    for (const { handler } of waiting) {
      expect(handler.errorCode).toBe('HTTP1_POOL_CLOSED');
      expect(handler.events).toEqual(['error']);
    }
    const late = start(pool);
    expect(late.handler.errorCode).toBe('HTTP1_POOL_CLOSED');

    await sleep(20);
    expect(closed).toBe(false);
    expect(inFlight.handler.events).toEqual(['sent']);
    ok(held[0] as ServerResponse, 'finished');
    await closing;
    expect(inFlight.handler.error).toBeNull();
    expect(inFlight.handler.body).toBe('finished');
    expect(pool.size).toBe(0);
    expect(upstream.requests.map(({ url }) => url)).toEqual(['/in-flight']);
  });

  it('lets a call in flight finish when other calls were dispatched with it and still wait', async () => {
    const held: ServerResponse[] = [];
    const upstream = await startHttpServer((_request, response) => held.push(response));
    const pool = newPool(upstream.origin, { maxConnections: 1 });
    const inFlight = start(pool, { path: '/in-flight' });
    const waiting = [start(pool, { path: '/waiting-1' }), start(pool, { path: '/waiting-2' })];
    await waitFor(() => held.length === 1, 'the first request to reach the upstream');
    const closing = pool.close();
    for (const { handler } of waiting) expect(handler.errorCode).toBe('HTTP1_POOL_CLOSED');
    ok(held[0] as ServerResponse, 'finished');
    await closing;
    expect(inFlight.handler.events).toEqual(['sent', 'start', 'data', 'end']);
    expect(inFlight.handler.body).toBe('finished');
  });

  it('closes idle connections and resolves', async () => {
    const upstream = await startHttpServer((_request, response) => ok(response));
    const pool = newPool(upstream.origin, { maxConnections: 2 });
    await Promise.all([succeeded(pool), succeeded(pool)]);
    expect(pool.size).toBe(2);
    await pool.close();
    expect(pool.size).toBe(0);
    await waitFor(() => upstream.sockets.size === 0, 'the upstream to see both connections close');
  });

  it('resolves at once when no connection is open', async () => {
    const pool = newPool(new URL('http://127.0.0.1:1'));
    await expect(pool.close()).resolves.toBeUndefined();
    expect(start(pool).handler.errorCode).toBe('HTTP1_POOL_CLOSED');
  });
});

describe('Http1Pool request validation', () => {
  const invalidRequests: [string, Partial<Http1Request>][] = [
    ['a header value with CR LF', { headers: { 'x-injected': 'value\r\nx-smuggled: yes' } }],
    ['a header value with a bare LF', { headers: { 'x-injected': 'value\nx-smuggled: yes' } }],
    ['a header value with a bare CR', { headers: { 'x-injected': 'value\rmore' } }],
    ['a header value with NUL', { headers: { 'x-injected': 'value\0' } }],
    ['a header name with a space', { headers: { 'x bad': 'value' } }],
    ['a header name with a colon', { headers: { 'x-bad:': 'value' } }],
    ['a traceparent with CR LF', { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\r\nx-smuggled: yes' }],
    ['a path with a space', { path: '/v1/a b' }],
    ['a path with CR LF', { path: '/v1\r\nx-smuggled: yes' }],
    ['a path that is not absolute', { path: 'v1/models' }],
  ];

  it.each(invalidRequests)('makes dispatch throw a TypeError for %s (with an idle connection)', async (_description, request) => {
    const upstream = await startHttpServer((_request, response) => ok(response));
    const pool = newPool(upstream.origin);
    // An idle connection, so that the request is built at once.
    await succeeded(pool);
    expect(() => start(pool, request)).toThrow(TypeError);
    await sleep(10);
    expect(upstream.requests).toHaveLength(1);
  });

  it('makes dispatch throw a TypeError for a header value with CR LF on a pool without an idle connection', async () => {
    const upstream = await startHttpServer((_request, response) => ok(response));
    const pool = newPool(upstream.origin);
    let thrown: unknown = null;
    let call: Http1Call | null = null;
    try {
      call = start(pool, { headers: { 'x-injected': 'value\r\nx-smuggled: yes' } }).call;
    } catch (error) {
      thrown = error;
    }
    // Keeps the deferred TypeError from escaping as an uncaught exception once the connection opens.
    call?.abort(new Error('test clean-up'));
    expect(thrown).toBeInstanceOf(TypeError);
  });

  it('keeps the idle connection usable after dispatch threw a TypeError', async () => {
    const upstream = await startHttpServer((_request, response) => ok(response));
    const pool = newPool(upstream.origin);
    await succeeded(pool);
    const rejected = new RecordingHandler();
    expect(() => pool.dispatch({ method: 'GET', path: '/', headers: { 'x-injected': 'a\r\nb' }, body: null }, rejected)).toThrow(TypeError);
    await succeeded(pool);
    expect(upstream.connectionCount).toBe(1);
    expect(pool.size).toBe(1);
  });
});
