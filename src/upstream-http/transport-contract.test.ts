import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ResolvedNetwork } from '../config/index.js';
import { startConnectProxy, type ConnectProxy } from '../../test/support/connect-proxy.js';
import { makeTestCertificates, opensslMissing, type TestCertificates } from '../../test/support/test-certificates.js';
import { startTlsTestUpstream, type Exchange, type TlsTestUpstream } from '../../test/support/tls-test-upstream.js';
import { createTransport } from './create-transport.js';
import type { ResponseHeadView, Transport, TransportCall, TransportHandler, TransportOptions, TransportRequest } from './transport.js';

/**
 * The contract every Transport keeps, run against both: the in-house HTTP/1.1 pool and undici's
 * Pool speaking HTTP/2, each made by createTransport as an endpoint's `network` block chooses, to
 * the same https upstream (signed by a private CA, offering both protocols by ALPN). Where HTTP/2
 * behaves differently by its nature (streams on one connection: an abort resets a stream, not the
 * connection), the case says what each transport does.
 */
interface TransportRow {
  name: string;
  http2: boolean;
  /** What the upstream must see, so that a row cannot silently run on the other protocol. */
  httpVersion: '1.1' | '2.0';
}
const TRANSPORTS: TransportRow[] = [
  { name: 'the in-house HTTP/1.1 pool', http2: false, httpVersion: '1.1' },
  { name: "undici's Pool over HTTP/2", http2: true, httpVersion: '2.0' },
];

const missing = opensslMissing();
let certificates: TestCertificates;
let ca: string;
let upstream: TlsTestUpstream;
const transports: Transport[] = [];
const cleanUps: (() => Promise<void>)[] = [];

beforeAll(() => {
  if (missing !== null) return;
  certificates = makeTestCertificates();
  ca = readFileSync(certificates.caFile, 'utf8');
});
afterAll(() => certificates?.remove());
beforeEach(async () => {
  if (missing === null) upstream = await startTlsTestUpstream(certificates);
});
afterEach(async () => {
  const closing = transports.splice(0).map((transport) => transport.close());
  await upstream?.close();
  for (const cleanUp of cleanUps.splice(0)) await cleanUp();
  await Promise.all(closing);
});

/** Records what a call reports, with when; `settled` resolves on its end or its error. */
class RecordingHandler implements TransportHandler {
  readonly events: string[] = [];
  readonly sentAt: number[] = [];
  statusCode: number | null = null;
  head: ResponseHeadView | null = null;
  readonly chunks: Buffer[] = [];
  error: Error | null = null;
  call: TransportCall | null = null;
  /** Called for each body chunk, after it is recorded. */
  onData: ((chunk: Buffer) => void) | null = null;
  readonly settled: Promise<void>;
  private settle: () => void = () => undefined;
  protected readonly startedAt = performance.now();

  constructor() {
    this.settled = new Promise<void>((resolve) => (this.settle = resolve));
  }

  get body(): string {
    return Buffer.concat(this.chunks).toString();
  }

  get bytes(): number {
    return this.chunks.reduce((sum, chunk) => sum + chunk.length, 0);
  }

  get errorCode(): unknown {
    return (this.error as NodeJS.ErrnoException | null)?.code;
  }

  onRequestSent(): void {
    this.sentAt.push(performance.now() - this.startedAt);
    if (this.events.at(-1) !== 'sent') this.events.push('sent');
  }

  onResponseStart(statusCode: number, head: ResponseHeadView): void {
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

/**
 * The upstream client's three clocks over a transport, as it runs them: the first byte from the
 * request's (last) send, idle gaps from each chunk, the total from dispatch. The phase that runs
 * out aborts the call with an error naming it.
 */
class ClockedHandler extends RecordingHandler {
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly limits: { firstByteMs: number; idleMs: number; totalMs: number }) {
    super();
  }

  override onRequestSent(): void {
    super.onRequestSent();
    this.arm(this.limits.firstByteMs, 'first byte');
  }

  override onResponseStart(statusCode: number, head: ResponseHeadView): void {
    super.onResponseStart(statusCode, head);
    this.arm(this.limits.idleMs, 'idle');
  }

  override onResponseData(chunk: Buffer): void {
    super.onResponseData(chunk);
    this.arm(this.limits.idleMs, 'idle');
  }

  override onResponseEnd(): void {
    this.disarm();
    super.onResponseEnd();
  }

  override onResponseError(error: Error): void {
    this.disarm();
    super.onResponseError(error);
  }

  private arm(phaseMs: number, phase: string): void {
    this.disarm();
    const left = this.limits.totalMs - (performance.now() - this.startedAt);
    const [ms, name] = left < phaseMs ? [left, 'total'] : [phaseMs, phase];
    this.timer = setTimeout(() => this.call?.abort(new Error(`${name} timeout`)), ms);
  }

  private disarm(): void {
    if (this.timer !== null) clearTimeout(this.timer);
  }
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 2_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

function ok({ response }: Exchange, body = 'ok'): void {
  response.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(Buffer.byteLength(body)) });
  response.end(body);
}

/** Answers after reading the request body. */
function afterBody(answer: (exchange: Exchange, body: Buffer) => void): (exchange: Exchange) => void {
  return (exchange) => void exchange.readBody().then((body) => answer(exchange, body));
}

describe.skipIf(missing !== null).each(TRANSPORTS)(`the Transport contract${missing === null ? '' : ` (skipped: ${missing})`}: $name`, (row) => {
  /** The expectation of this row's transport, where the two differ. */
  const per = <T>(expected: { http1: T; http2: T }): T => (row.http2 ? expected.http2 : expected.http1);

  function open(options: Partial<TransportOptions> = {}, network: Partial<ResolvedNetwork> = {}, origin: URL = upstream.origin): Transport {
    const transport = createTransport(origin, { maxConnections: 4, connectTimeoutMs: 1_000, keepAliveMs: 10_000, ...options }, { proxy: null, ca, cert: null, key: null, http2: row.http2, ...network });
    transports.push(transport);
    return transport;
  }

  function start<H extends RecordingHandler>(transport: Transport, request: Partial<TransportRequest> = {}, handler: H = new RecordingHandler() as H): H {
    handler.call = transport.dispatch({ method: 'GET', path: '/', headers: {}, body: null, ...request }, handler);
    return handler;
  }

  async function send(transport: Transport, request: Partial<TransportRequest> = {}): Promise<RecordingHandler> {
    const handler = start(transport, request);
    await handler.settled;
    return handler;
  }

  async function succeeded(transport: Transport, request: Partial<TransportRequest> = {}): Promise<RecordingHandler> {
    const handler = await send(transport, request);
    expect(handler.error).toBeNull();
    expect(handler.events.at(-1)).toBe('end');
    return handler;
  }

  /** The exchanges the upstream holds open, in arrival order. */
  function holdRequests(): Exchange[] {
    const held: Exchange[] = [];
    upstream.behaviour = (exchange) => held.push(exchange);
    return held;
  }

  describe('requests and responses', () => {
    it('carries a POST (method, path, headers, body) and delivers the status, headers and body', async () => {
      upstream.behaviour = afterBody(({ response }, body) => {
        response.writeHead(201, { 'content-type': 'application/json', 'x-answer': '42', 'set-cookie': ['a=1', 'b=2'] });
        response.end(`{"received":${JSON.stringify(body.toString())}}`);
      });
      const body = '{"text":"héllo ✓"}';
      const handler = await succeeded(open(), { method: 'POST', path: '/v1/things?limit=1', headers: { 'content-type': 'application/json', authorization: 'Bearer secret', 'content-length': String(Buffer.byteLength(body)) }, body });
      const [seen] = upstream.requests;
      expect(seen).toMatchObject({ method: 'POST', path: '/v1/things?limit=1', httpVersion: row.httpVersion });
      expect(seen?.headers).toMatchObject({ 'content-type': 'application/json', authorization: 'Bearer secret', 'content-length': String(Buffer.byteLength(body)) });
      expect(seen?.headers[row.http2 ? ':authority' : 'host']).toBe(`127.0.0.1:${upstream.port}`);
      expect(handler.statusCode).toBe(201);
      expect(handler.head?.headers).toMatchObject({ 'content-type': 'application/json', 'x-answer': '42', 'set-cookie': ['a=1', 'b=2'] });
      expect(JSON.parse(handler.body)).toEqual({ received: body });
      expect(handler.events).toEqual(['sent', 'start', 'data', 'end']);
    });

    it('streams a Readable upload and tells onRequestSent with each chunk (the first-byte clock restarts)', async () => {
      upstream.behaviour = afterBody((exchange, body) => ok(exchange, String(body.length)));
      async function* slowly(): AsyncGenerator<Buffer> {
        for (let part = 0; part < 4; part++) {
          yield Buffer.alloc(1_000, 1);
          await sleep(60);
        }
      }
      const handler = await succeeded(open(), { method: 'POST', headers: { 'content-length': '4000' }, body: Readable.from(slowly()) });
      expect(handler.body).toBe('4000');
      expect(handler.sentAt.length).toBeGreaterThanOrEqual(4);
      // The last send is told when the last chunk goes, not when the upload began.
      expect(handler.sentAt.at(-1)).toBeGreaterThanOrEqual(170);
    });
  });

  describe('keep-alive', () => {
    it('serves sequential calls on one kept-alive connection', async () => {
      upstream.behaviour = (exchange) => ok(exchange, exchange.seen.path);
      const transport = open();
      for (let index = 0; index < 10; index++) expect((await succeeded(transport, { path: `/call/${index}` })).body).toBe(`/call/${index}`);
      expect(upstream.requests.map(({ httpVersion }) => httpVersion)).toEqual(Array(10).fill(row.httpVersion));
      expect(upstream.connectionCount).toBe(1);
    });

    // undici's Pool runs with `pipelining: 1`: over HTTP/2 too, one stream at a time per connection.
    it('serves concurrent calls on up to maxConnections connections, one call each, the rest waiting in order', async () => {
      const held = holdRequests();
      const transport = open({ maxConnections: 2 });
      const calls = Array.from({ length: 4 }, (_, index) => start(transport, { path: `/concurrent/${index}` }));
      await waitFor(() => held.length === 2, 'two calls to reach the upstream');
      await sleep(30);
      expect(held.map(({ seen }) => seen.path)).toEqual(['/concurrent/0', '/concurrent/1']);
      for (const exchange of held.splice(0)) ok(exchange, exchange.seen.path);
      await waitFor(() => held.length === 2, 'the two waiting calls to reach the upstream');
      for (const exchange of held.splice(0)) ok(exchange, exchange.seen.path);
      await Promise.all(calls.map(({ settled }) => settled));
      expect(calls.map(({ body }) => body)).toEqual(['/concurrent/0', '/concurrent/1', '/concurrent/2', '/concurrent/3']);
      expect(upstream.connectionCount).toBe(2);
    });

    it(`${row.http2 ? 'keeps an idle connection past keepAliveMs (undici applies it to HTTP/1.1 only)' : 'closes a connection left idle for keepAliveMs'}, and serves the next call`, async () => {
      upstream.behaviour = (exchange) => ok(exchange);
      const transport = open({ keepAliveMs: 150 });
      await succeeded(transport);
      expect(upstream.openConnections).toBe(1);
      if (row.http2) await sleep(600);
      else await waitFor(() => upstream.openConnections === 0, 'the idle connection to be closed', 3_000);
      expect(upstream.openConnections).toBe(per({ http1: 0, http2: 1 }));
      await succeeded(transport);
      expect(upstream.connectionCount).toBe(per({ http1: 2, http2: 1 }));
    });

    it('opens a new connection when the upstream closed the idle one', async () => {
      upstream.behaviour = (exchange) => ok(exchange);
      const transport = open();
      await succeeded(transport);
      upstream.endConnections();
      await waitFor(() => upstream.openConnections === 0, 'the upstream to close its idle connection');
      await sleep(20);
      expect((await succeeded(transport)).body).toBe('ok');
      expect(upstream.connectionCount).toBe(2);
    });
  });

  describe('caps and timeouts (the upstream client runs the clocks and caps over the transport)', () => {
    const limits = { firstByteMs: 150, idleMs: 100, totalMs: 5_000 };

    it('first byte: a silent upstream is aborted at the deadline and sees its exchange cancelled', async () => {
      const held = holdRequests();
      const transport = open();
      const handler = start(transport, {}, new ClockedHandler(limits));
      await handler.settled;
      expect(handler.error?.message).toBe('first byte timeout');
      expect(handler.events).toEqual(['sent', 'error']);
      expect(performance.now() - (handler.sentAt.at(-1) as number)).toBeGreaterThanOrEqual(limits.firstByteMs - 1);
      await held[0]?.cancelled;
      // HTTP/1.1 closes the connection (a half-done exchange cannot be reused); HTTP/2 resets the stream only.
      await waitFor(() => upstream.openConnections === per({ http1: 0, http2: 1 }), 'the connection to be closed or kept');
      upstream.behaviour = (exchange) => ok(exchange);
      await succeeded(transport);
      expect(upstream.connectionCount).toBe(per({ http1: 2, http2: 1 }));
    });

    it('idle: a body that goes silent is aborted idleMs after its last chunk', async () => {
      upstream.behaviour = ({ response }) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write('data: one\n\n');
      };
      const handler = start(open(), {}, new ClockedHandler(limits));
      await handler.settled;
      expect(handler.error?.message).toBe('idle timeout');
      expect(handler.events).toEqual(['sent', 'start', 'data', 'error']);
      expect(handler.body).toBe('data: one\n\n');
    });

    it('idle: a body whose chunks keep coming runs past idleMs, each chunk delivered as it arrives', async () => {
      upstream.behaviour = ({ response }) => {
        response.writeHead(200, { 'content-type': 'text/plain' });
        let sent = 0;
        const timer = setInterval(() => {
          response.write(`${sent},`);
          if (++sent === 8) {
            clearInterval(timer);
            response.end();
          }
        }, limits.idleMs / 2);
      };
      const handler = start(open(), {}, new ClockedHandler(limits));
      await handler.settled;
      expect(handler.error).toBeNull();
      expect(handler.body).toBe('0,1,2,3,4,5,6,7,');
      expect(handler.chunks.length).toBeGreaterThanOrEqual(4);
    });

    it('total: a body that never stalls is aborted at the total deadline', async () => {
      upstream.behaviour = ({ response }) => {
        response.writeHead(200, { 'content-type': 'text/plain' });
        const timer = setInterval(() => response.write('tick,'), 20);
        response.on('close', () => clearInterval(timer));
      };
      const handler = start(open(), {}, new ClockedHandler({ ...limits, totalMs: 300 }));
      await handler.settled;
      expect(handler.error?.message).toBe('total timeout');
      expect(handler.chunks.length).toBeGreaterThan(3);
    });

    it('response cap: a caller that aborts past its cap gets nothing more, and the transport serves the next call', async () => {
      const held = holdRequests();
      upstream.behaviour = (exchange) => {
        held.push(exchange);
        exchange.response.writeHead(200, { 'content-type': 'application/octet-stream' });
        const timer = setInterval(() => exchange.response.write(Buffer.alloc(16 * 1024, 'x')), 2);
        exchange.response.on('close', () => clearInterval(timer));
      };
      const transport = open();
      const cap = 100 * 1024;
      const handler = start(transport);
      handler.onData = () => {
        if (handler.bytes > cap) handler.call?.abort(new Error(`larger than ${cap} bytes`));
      };
      await handler.settled;
      expect(handler.error?.message).toBe(`larger than ${cap} bytes`);
      const bytesAtAbort = handler.bytes;
      await held[0]?.cancelled;
      await sleep(30);
      expect(handler.bytes).toBe(bytesAtAbort);
      expect(handler.events.at(-1)).toBe('error');
      upstream.behaviour = (exchange) => ok(exchange);
      await succeeded(transport);
      expect(upstream.connectionCount).toBe(per({ http1: 2, http2: 1 }));
    });

    it('response head cap: a head of 60 KiB is read, one of 80 KiB fails the call (both stop near 64 KiB)', async () => {
      upstream.behaviour = (exchange) => {
        exchange.response.writeHead(200, { 'x-large': 'h'.repeat((exchange.seen.path === '/large' ? 80 : 60) * 1024) });
        exchange.response.end('body');
      };
      const transport = open();
      expect((await succeeded(transport, { path: '/fits' })).body).toBe('body');
      const handler = await send(transport, { path: '/large' });
      expect(handler.events).toEqual(['sent', 'error']);
      // The codes differ: the in-house parser's protocol error, node:http2's stream error.
      expect(handler.errorCode).toBe(per({ http1: 'HTTP1_PROTOCOL', http2: 'ERR_HTTP2_STREAM_ERROR' }));
    });

    it('connect timeout: a TLS handshake that never completes fails within connectTimeoutMs', async () => {
      // Accepts the TCP connection and never says a word: a TLS connect is done only at secureConnect.
      const accepted: Socket[] = [];
      const silent = createNetServer((socket) => accepted.push(socket.on('error', () => undefined)));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      cleanUps.push(() => {
        for (const socket of accepted) socket.destroy();
        return new Promise((resolve) => silent.close(() => resolve()));
      });
      const started = performance.now();
      const handler = await send(open({ connectTimeoutMs: 100 }, {}, new URL(`https://127.0.0.1:${(silent.address() as AddressInfo).port}`)));
      expect(handler.errorCode).toBe('UPSTREAM_CONNECT_TIMEOUT');
      expect(handler.events).toEqual(['error']);
      expect(performance.now() - started).toBeGreaterThanOrEqual(95);
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(accepted).toHaveLength(1);
    });
  });
});
