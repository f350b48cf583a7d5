// The plumbing every fake upstream shares: a loopback HTTP server that reads each request body
// whole before the fake answers it, ends its open streams on close, and writes JSON bodies and
// server-sent events the way real upstreams do (events cut at odd byte boundaries, delays between
// them, keep-alive comments, a reset mid-stream). The fakes keep only what their vendor models.

import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { ByteSplitter } from './sse-framing.js';

export interface RecordedJsonRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body, or the raw text when it is not JSON. */
  body: unknown;
}

export interface FakeFailure {
  status: number;
  /** An object is sent as JSON, a string as is. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface JsonFakeServer {
  /** `http://127.0.0.1:PORT`, without a path. */
  readonly url: string;
  readonly requests: RecordedJsonRequest[];
  failNext(failure: FakeFailure, times?: number): void;
  close(): Promise<void>;
}

/** Answers one recorded request; `route` is `METHOD /path`. */
export type JsonFakeRoute = (route: string, body: unknown, response: ServerResponse) => void;

/** Answers one request whose body has been read whole. A throw (the client went away) destroys the response. */
export type FakeRequestHandler = (request: IncomingMessage, response: ServerResponse, rawBody: Buffer) => Promise<void> | void;

export interface FakeServer {
  /** `http://127.0.0.1:PORT`, without a path. */
  readonly url: string;
  /** Connections open now (kept alive ones included). */
  readonly openConnections: number;
  /** Closes the server and destroys its connections (streams a test left open included); once. */
  close(): Promise<void>;
}

/** A loopback HTTP server on a free port handing each request, its body read, to `handle`. */
export async function startFakeServer(handle: FakeRequestHandler, options: { keepAliveTimeoutMs?: number } = {}): Promise<FakeServer> {
  const sockets = new Set<Socket>();
  const server = createServer((request, response) => {
    readBody(request)
      .then((rawBody) => handle(request, response, rawBody))
      .catch(() => {
        // The client went away mid-request or mid-stream; nothing left to answer.
        response.destroy();
      });
  });
  if (options.keepAliveTimeoutMs !== undefined) server.keepAliveTimeout = options.keepAliveTimeoutMs;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    // Small SSE pieces must leave as they are written, not wait for Nagle.
    socket.setNoDelay(true);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    get openConnections() {
      return sockets.size;
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        // The callback's error only says "was not running", which is fine here.
        server.close(() => resolve());
        // server.close() waits for open connections; streaming tests leave some open.
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}

/**
 * The fake the JSON vendors share: record each request before answering it, let queued
 * `failNext` answers win over everything, and hand the rest to the vendor's own `answer`.
 */
export async function startJsonFakeServer(answer: JsonFakeRoute, defaultFailureBody: unknown): Promise<JsonFakeServer> {
  const requests: RecordedJsonRequest[] = [];
  const failures: Array<{ failure: FakeFailure; remaining: number }> = [];
  const server = await startFakeServer((request, response, rawBody) => {
    const raw = rawBody.toString('utf8');
    let body: unknown = raw;
    try {
      body = JSON.parse(raw);
    } catch {
      // Recorded as text; the vendor's answer refuses it.
    }
    requests.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body });
    const pending = failures[0];
    if (pending !== undefined) {
      if (--pending.remaining <= 0) failures.shift();
      sendJson(response, pending.failure.status, pending.failure.body ?? defaultFailureBody, pending.failure.headers);
      return;
    }
    answer(`${request.method} ${request.url}`, body, response);
  });
  return {
    url: server.url,
    requests,
    failNext(failure, times = 1) {
      failures.push({ failure, remaining: times });
    },
    close: () => server.close(),
  };
}

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(typeof body === 'string' ? body : JSON.stringify(body));
}

/** A whole body with its length, JSON unless `headers` say otherwise; `headers` come first, as the fake orders them. */
export function sendBytes(response: ServerResponse, status: number, bytes: Buffer, headers: OutgoingHttpHeaders = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': String(bytes.length), ...headers });
  response.end(bytes);
}

/** Resolves once the piece reached the socket, or the response died trying. */
export function writeAndWait(response: ServerResponse, piece: Buffer | string): Promise<void> {
  return new Promise((resolve) => {
    if (response.destroyed) {
      resolve();
      return;
    }
    const done = (): void => {
      response.off('close', done);
      resolve();
    };
    response.once('close', done);
    response.write(piece, done);
  });
}

export interface EventStreamOptions {
  /** Cut the bytes into odd-sized pieces (sse-framing's SPLIT_SIZES) that straddle event boundaries. */
  splitBytes?: boolean;
  /** Between two events, after what came before has left. */
  delayMs?: number;
  /** Destroy the connection (what was written flushed first) instead of writing event N; after the last event when N is their count. */
  resetAfterEvents?: number;
  /** A framed comment written first and before every `keepAliveEvery`-th event. */
  keepAlive?: { comment: string; every: number };
  /** Told the bytes of each event as they are written. */
  onEvent?: (bytes: Buffer) => void;
}

/**
 * Writes framed events to a response whose head is written, then ends it (or resets it). Every
 * piece is its own write followed by a turn of the event loop, so each leaves as its own chunk
 * instead of being coalesced with the next.
 */
export async function writeEventStream(
  request: IncomingMessage,
  response: ServerResponse,
  events: ReadonlyArray<string | Buffer>,
  options: EventStreamOptions = {},
): Promise<void> {
  const splitter = options.splitBytes === true ? new ByteSplitter() : undefined;
  const send = async (pieces: Buffer[]): Promise<void> => {
    for (const piece of pieces) {
      if (response.destroyed) return;
      await writeAndWait(response, piece);
      await nextTurn();
    }
  };
  const write = (text: string | Buffer): Promise<void> => {
    const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
    return send(splitter === undefined ? [bytes] : splitter.push(bytes));
  };
  const flush = (): Promise<void> => send(splitter?.flush() ?? []);
  const reset = async (): Promise<void> => {
    // Everything up to here reaches the client, then the connection closes without the
    // terminating chunk: the client sees a body that ends mid-stream.
    await flush();
    request.socket.destroy();
  };
  const { keepAlive, delayMs = 0 } = options;
  if (keepAlive !== undefined) await write(keepAlive.comment);
  for (const [index, event] of events.entries()) {
    if (index === options.resetAfterEvents) return reset();
    if (response.destroyed) return;
    if (index > 0 && delayMs > 0) {
      // Flush first so the delay is visible to the client as a gap between events.
      await flush();
      await sleep(delayMs);
    }
    if (keepAlive !== undefined && index > 0 && index % keepAlive.every === 0) await write(keepAlive.comment);
    const bytes = typeof event === 'string' ? Buffer.from(event, 'utf8') : event;
    options.onEvent?.(bytes);
    await write(bytes);
  }
  if (events.length === options.resetAfterEvents) return reset();
  await flush();
  response.end();
}

export function readJsonFixture(directory: URL, name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(name, directory), 'utf8')) as Record<string, unknown>;
}

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}
