// A fake upstream whose fault is chosen per request, for the fault-injection suite.
//
// The fault is the upstream model name the gateway sends: the JSON body's `model` (OpenAI and
// Anthropic wire formats) or the `models/{name}:` path segment (Gemini). So one gateway config can
// route each public model to a fault, and concurrent requests never race for a queued fault.
// A body that carries `switchyard-fault:{name}` in its text (a message a caller wrote) gets that
// fault instead, whatever the model: the inputs of one caller make the upstream fail, as a
// self-hosted server does for inputs it cannot handle, while other callers' requests succeed.
// `/responses` is answered 404, as by an OpenAI-compatible server without the Responses API.
//
// Well-behaved answers replay the recorded OpenAI traffic in test/fixtures/openai (see its README);
// the faults are what broken upstreams and middleboxes really send: HTML error pages with a 200,
// empty bodies, bytes that are not text, a stream that is one endless line, error bodies of tens of
// megabytes, connections reset after the request was read, streams that never end.
//
// The server is json-fake-server's, on node:http, so nothing reshapes the bytes.

import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { sendBytes, startFakeServer } from './json-fake-server.js';

export const FAULTS = [
  /** A recorded completion, or the recorded stream. */
  'ok',
  /** The recorded completion without `usage`, or the recorded stream without its usage chunk: the gateway must estimate. */
  'no-usage',
  /** 200 with an HTML page. */
  'html',
  /** 200 with `application/json` and no body. */
  'empty',
  /** 200 with random bytes labelled `application/json`. */
  'bytes',
  /** 200 with `null`. */
  'null',
  /** 200 with `{"choices":"x"}`. */
  'bad-choices',
  /** A stream request answered 200 with a JSON completion instead of events. */
  'json-to-stream',
  /** A stream that opens, then sends one `data:` line of `HUGE_BYTES` without a newline. */
  'huge-event',
  /** 200 with a JSON answer of `HUGE_BYTES`. */
  'huge-answer',
  /** 500 with an error body of `HUGE_BYTES`. */
  'huge-error',
  /** Reads the whole request, then resets the connection without answering. */
  'reset-after-read',
  /** Reads the request and never answers (until the connection closes). */
  'hang',
  /** A stream of `STREAM_EVENT_BYTES` events that goes on until the connection closes. */
  'endless-stream',
  /** 500 with an OpenAI-style error body: the server failed on this request. */
  'server-error',
  /** 404 with OpenAI's `model_not_found` error. */
  'model-not-found',
] as const;

export type Fault = (typeof FAULTS)[number];

/** Size of the huge bodies: far past any cap the suite configures, small enough to send in a second. */
export const HUGE_BYTES = 48 * 1024 * 1024;
/** Content length of one event of `endless-stream`. */
export const STREAM_EVENT_BYTES = 16 * 1024;

export interface FaultUpstream {
  readonly url: string;
  /** Requests received, by fault, counted once the whole body was read. */
  readonly received: Map<string, number>;
  /** Connections open now. */
  readonly openConnections: number;
  /** Endless streams still being written (each ends when its connection closes). */
  readonly endlessStreams: number;
  close(): Promise<void>;
}

interface Fixtures {
  completion: Record<string, unknown>;
  streamChunks: string[];
  usageChunk: string;
}

const FIXTURES = new URL('../fixtures/openai/', import.meta.url);

async function loadFixtures(): Promise<Fixtures> {
  const completion = JSON.parse(await readFile(new URL('chat-completion.json', FIXTURES), 'utf8')) as Record<string, unknown>;
  const payloads = (await readFile(new URL('chat-completion-stream.sse', FIXTURES), 'utf8'))
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => line.slice('data: '.length));
  const usageChunk = payloads.find((payload) => (JSON.parse(payload) as { choices: unknown[] }).choices.length === 0);
  if (usageChunk === undefined) throw new Error('the stream fixture has no usage chunk');
  return { completion, streamChunks: payloads.filter((payload) => payload !== usageChunk), usageChunk };
}

export async function startFaultUpstream(): Promise<FaultUpstream> {
  const fixtures = await loadFixtures();
  const received = new Map<string, number>();
  let endlessStreams = 0;
  const server = await startFakeServer(
    (request, response, rawBody) => {
      const body = rawBody.toString('utf8');
      if ((request.url ?? '').endsWith('/responses')) {
        received.set('/responses', (received.get('/responses') ?? 0) + 1);
        return sendJson(response, 404, { detail: 'Not Found' });
      }
      const fault = faultOf(request, body);
      received.set(fault, (received.get(fault) ?? 0) + 1);
      if (fault === 'ok' && (request.url ?? '').endsWith('/embeddings')) return sendEmbeddings(response, body);
      if (fault === 'endless-stream') {
        endlessStreams++;
        response.once('close', () => endlessStreams--);
      }
      return answer(fault, streamRequested(request, body), response, fixtures);
    },
    { keepAliveTimeoutMs: 60_000 },
  );
  return {
    url: server.url,
    received,
    get openConnections() {
      return server.openConnections;
    },
    get endlessStreams() {
      return endlessStreams;
    },
    close: () => server.close(),
  };
}

const CONTENT_FAULT = /switchyard-fault:([a-z-]+)/;

function faultOf(request: IncomingMessage, body: string): string {
  const chosen = CONTENT_FAULT.exec(body);
  if (chosen?.[1] !== undefined) return chosen[1];
  const gemini = /\/models\/([^/:]+):/.exec(request.url ?? '');
  if (gemini?.[1] !== undefined) return decodeURIComponent(gemini[1]);
  try {
    const model = (JSON.parse(body) as { model?: unknown }).model;
    return typeof model === 'string' ? model : 'ok';
  } catch {
    return 'ok';
  }
}

function streamRequested(request: IncomingMessage, body: string): boolean {
  if ((request.url ?? '').includes('streamGenerateContent')) return true;
  try {
    return (JSON.parse(body) as { stream?: unknown }).stream === true;
  } catch {
    return false;
  }
}

async function answer(fault: string, stream: boolean, response: ServerResponse, fixtures: Fixtures): Promise<void> {
  switch (fault as Fault) {
    case 'ok':
    case 'no-usage':
      // What OpenAI sends about the credential's own limits: never the caller's to see.
      response.setHeader('x-ratelimit-limit-requests', '10000');
      response.setHeader('x-ratelimit-remaining-requests', '9999');
      response.setHeader('x-ratelimit-reset-requests', '6ms');
      if (stream) return sendStream(response, fixtures, fault === 'ok');
      return sendJson(response, 200, fault === 'ok' ? fixtures.completion : { ...fixtures.completion, usage: undefined });
    case 'html':
      response.writeHead(200, { 'content-type': 'text/html' });
      return void response.end('<html><body><h1>502 Bad Gateway</h1><p>cloudflare</p></body></html>');
    case 'empty':
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '0' });
      return void response.end();
    case 'bytes':
      response.writeHead(200, { 'content-type': 'application/json' });
      return void response.end(randomBytes(4096));
    case 'null':
      return sendJson(response, 200, null);
    case 'bad-choices':
      return sendJson(response, 200, { choices: 'x' });
    case 'json-to-stream':
      return sendJson(response, 200, fixtures.completion);
    case 'huge-event':
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(`data: ${fixtures.streamChunks[0]}\n\ndata: "`);
      return writeFiller(response, HUGE_BYTES);
    case 'huge-answer':
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"choices":[{"message":{"content":"');
      return writeFiller(response, HUGE_BYTES);
    case 'huge-error':
      response.writeHead(500, { 'content-type': 'application/json' });
      response.write('{"error":{"message":"');
      return writeFiller(response, HUGE_BYTES);
    case 'reset-after-read':
      return void response.socket?.resetAndDestroy();
    case 'hang':
      return;
    case 'endless-stream':
      return sendEndlessStream(response, fixtures);
    case 'server-error':
      return sendJson(response, 500, { error: { message: 'The server had an error while processing your request.', type: 'server_error', code: null } });
    case 'model-not-found':
      return sendJson(response, 404, {
        error: { message: 'The model does not exist or you do not have access to it.', type: 'invalid_request_error', code: 'model_not_found' },
      });
    default:
      return sendJson(response, 404, { error: { message: `unknown fault ${fault}`, type: 'invalid_request_error' } });
  }
}

/** One small vector per input, in OpenAI's shape. */
function sendEmbeddings(response: ServerResponse, body: string): void {
  const { input, model } = JSON.parse(body) as { input: unknown[]; model: string };
  const data = input.map((_, index) => ({ object: 'embedding', index, embedding: [0.25, -0.5, 0.75] }));
  sendJson(response, 200, { object: 'list', data, model, usage: { prompt_tokens: input.length, total_tokens: input.length } });
}

function sendJson(response: ServerResponse, status: number, value: unknown): void {
  sendBytes(response, status, Buffer.from(JSON.stringify(value), 'utf8'));
}

async function sendStream(response: ServerResponse, fixtures: Fixtures, withUsage: boolean): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
  for (const chunk of fixtures.streamChunks) response.write(`data: ${chunk}\n\n`);
  if (withUsage) response.write(`data: ${fixtures.usageChunk}\n\n`);
  response.end('data: [DONE]\n\n');
}

/** Writes `bytes` of `a` in 64 KB pieces, with backpressure, stopping when the gateway hangs up. */
async function writeFiller(response: ServerResponse, bytes: number): Promise<void> {
  const piece = Buffer.alloc(64 * 1024, 'a');
  for (let sent = 0; sent < bytes && !response.destroyed; sent += piece.length) {
    if (!response.write(piece)) await waitForDrain(response);
  }
  response.end();
}

async function sendEndlessStream(response: ServerResponse, fixtures: Fixtures): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  const template = JSON.parse(fixtures.streamChunks[1] as string) as { choices: Array<{ delta: { content: string } }> };
  (template.choices[0] as { delta: { content: string } }).delta.content = 'x'.repeat(STREAM_EVENT_BYTES);
  const event = `data: ${JSON.stringify(template)}\n\n`;
  while (!response.destroyed) {
    if (!response.write(event)) await waitForDrain(response);
    else await sleep(0);
  }
}

function waitForDrain(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}
