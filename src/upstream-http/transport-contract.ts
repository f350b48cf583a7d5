import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import type { ResolvedNetwork } from '../config/index.js';
import { makeTestCertificates, type TestCertificates } from '../../test/support/test-certificates.js';
import { startTlsTestUpstream, type Exchange, type TlsTestUpstream } from '../../test/support/tls-test-upstream.js';
import { createTransport } from './create-transport.js';
import type { ResponseHeadView, Transport, TransportCall, TransportHandler, TransportOptions, TransportRequest } from './transport.js';

/**
 * What the transport contract runs on (transport-contract.test.ts): one row per transport, each
 * made by createTransport as an endpoint's `network` block chooses, and a fresh https upstream
 * per case (signed by a private CA, offering `h2` and `http/1.1` by ALPN, so each transport
 * speaks its own protocol to the same server).
 */
export interface TransportRow {
  name: string;
  http2: boolean;
  /** What the upstream must see, so that a row cannot silently run on the other protocol. */
  httpVersion: '1.1' | '2.0';
}

export interface TransportContract {
  readonly row: TransportRow;
  /** This case's upstream. */
  readonly upstream: TlsTestUpstream;
  readonly certificates: TestCertificates;
  /** The test CA, PEM. */
  readonly ca: string;
  /** The expectation of this row's transport, where the two differ. */
  per<T>(expected: { http1: T; http2: T }): T;
  /** A transport to `origin` (the upstream's by default), closed after the case. */
  open(options?: Partial<TransportOptions>, network?: Partial<ResolvedNetwork>, origin?: URL): Transport;
  start<H extends RecordingHandler>(transport: Transport, request?: Partial<TransportRequest>, handler?: H): H;
  send(transport: Transport, request?: Partial<TransportRequest>): Promise<RecordingHandler>;
  succeeded(transport: Transport, request?: Partial<TransportRequest>): Promise<RecordingHandler>;
  /** The exchanges the upstream holds open from now on, unanswered, in arrival order. */
  holdRequests(): Exchange[];
  /** Closes `transport` now; it is then not closed again after the case. */
  close(transport: Transport): Promise<void>;
  /** Runs after the case, after its transports are told to close. */
  onCleanUp(cleanUp: () => Promise<void> | void): void;
}

/** Registers the row's hooks (certificates once, an upstream per case, every transport closed after it). */
export function useTransportContract(row: TransportRow): TransportContract {
  let certificates: TestCertificates | undefined;
  let ca = '';
  let upstream: TlsTestUpstream | undefined;
  const transports: Transport[] = [];
  const cleanUps: (() => Promise<void> | void)[] = [];
  beforeAll(() => {
    certificates = makeTestCertificates();
    ca = readFileSync(certificates.caFile, 'utf8');
  });
  afterAll(() => certificates?.remove());
  beforeEach(async () => {
    upstream = await startTlsTestUpstream(certificates as TestCertificates);
  });
  afterEach(async () => {
    const closing = transports.splice(0).map((transport) => transport.close());
    await upstream?.close();
    for (const cleanUp of cleanUps.splice(0).reverse()) await cleanUp();
    await Promise.all(closing);
  });

  const contract: TransportContract = {
    row,
    get upstream() {
      return upstream as TlsTestUpstream;
    },
    get certificates() {
      return certificates as TestCertificates;
    },
    get ca() {
      return ca;
    },
    per: (expected) => (row.http2 ? expected.http2 : expected.http1),
    open(options = {}, network = {}, origin = contract.upstream.origin) {
      const transport = createTransport(
        origin,
        { maxConnections: 4, connectTimeoutMs: 1_000, keepAliveMs: 10_000, ...options },
        { proxy: null, ca, cert: null, key: null, http2: row.http2, ...network },
      );
      transports.push(transport);
      return transport;
    },
    start<H extends RecordingHandler>(transport: Transport, request: Partial<TransportRequest> = {}, handler: H = new RecordingHandler() as H): H {
      handler.call = transport.dispatch({ method: 'GET', path: '/', headers: {}, body: null, ...request }, handler);
      return handler;
    },
    async send(transport, request = {}) {
      const handler = contract.start(transport, request);
      await handler.settled;
      return handler;
    },
    async succeeded(transport, request = {}) {
      const handler = await contract.send(transport, request);
      expect(handler.error).toBeNull();
      expect(handler.events.at(-1)).toBe('end');
      return handler;
    },
    holdRequests() {
      const held: Exchange[] = [];
      contract.upstream.behaviour = (exchange) => held.push(exchange);
      return held;
    },
    close(transport) {
      transports.splice(transports.indexOf(transport), 1);
      return transport.close();
    },
    onCleanUp: (cleanUp) => void cleanUps.push(cleanUp),
  };
  return contract;
}

/** Records what a call reports, with when; `settled` resolves on its end or its error. */
export class RecordingHandler implements TransportHandler {
  readonly events: string[] = [];
  /** When each send and the end or error were told, in ms from dispatch. */
  readonly sentAt: number[] = [];
  settledAt = -1;
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
    this.settledAt = performance.now() - this.startedAt;
    this.settle();
  }

  onResponseError(error: Error): void {
    this.events.push('error');
    this.error = error;
    this.settledAt = performance.now() - this.startedAt;
    this.settle();
  }
}

/**
 * The upstream client's three clocks over a transport, as it runs them: the first byte from the
 * request's (last) send, idle gaps from each chunk, the total from dispatch. The phase that runs
 * out aborts the call with an error naming it.
 */
export class ClockedHandler extends RecordingHandler {
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

export async function waitFor(condition: () => boolean, what: string, timeoutMs = 2_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

export function ok({ response }: Exchange, body = 'ok'): void {
  response.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(Buffer.byteLength(body)) });
  response.end(body);
}

/** Answers after reading the request body. */
export function afterBody(answer: (exchange: Exchange, body: Buffer) => void): (exchange: Exchange) => void {
  return (exchange) => void exchange.readBody().then((body) => answer(exchange, body));
}
