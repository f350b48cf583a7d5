// A fake Gemini API (generativelanguage.googleapis.com/v1beta) for the gateway's tests.
//
// It replays recorded Gemini traffic from test/fixtures/gemini (see test/fixtures/README.md):
// - POST /v1beta/models/{model}:generateContent answers the recorded text answer, or the recorded
//   function call when the request declares functions and does not set mode NONE;
// - POST /v1beta/models/{model}:streamGenerateContent?alt=sse streams the matching recorded events
//   as `data: …\r\n\r\n`, cut at odd byte offsets; without alt=sse it answers a JSON array, as
//   Google does;
// - POST /v1beta/models/{model}:batchEmbedContents answers one vector per request, in order, that
//   encodes its text (see fakeGeminiEmbedding), in the recorded envelope. Like Google it refuses
//   more than 100 requests and requests naming another model;
// - a request without `x-goog-api-key` gets Google's recorded 403;
// - queued `failNext` answers win over everything; a failure without a body gets the recorded
//   error body for its status.
// - with `functionCall`, the recorded function call answer calls that function with those args
//   instead, and a request whose last content carries a `functionResponse` (the turn after the
//   function ran) gets the recorded text answer: an agent's loop ends.
// Every request is recorded first. The server and the event writing are json-fake-server's, on
// node:http, so nothing reshapes the bytes.

import { readdir, readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startFakeServer, writeEventStream } from './json-fake-server.js';

export interface RecordedGeminiRequest {
  method: string;
  /** The path without the query string. */
  path: string;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

export interface GeminiFailure {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface FakeGeminiOptions {
  /** Cut SSE bytes at odd offsets (default true). */
  splitBytes?: boolean;
  /** Send this error object as an SSE event after that many recorded events. */
  midStreamError?: { afterEvents: number; error: unknown };
  /** Send the embeddings' `usageMetadata` (only newer embedding models do); default false. */
  embeddingUsage?: boolean;
  /** The function the recorded function call answer calls, and its args; see the header. */
  functionCall?: { name: string; args: Record<string, unknown> };
}

export interface FakeGeminiUpstream {
  /** The base URL to configure, ending in /v1beta. */
  readonly url: string;
  readonly requests: RecordedGeminiRequest[];
  options: FakeGeminiOptions;
  failNext(failure: GeminiFailure, times?: number): void;
  close(): Promise<void>;
}

type JsonObject = Record<string, unknown>;

interface Fixtures {
  text: JsonObject;
  toolCall: JsonObject;
  textStream: string[];
  toolCallStream: string[];
  embeddings: JsonObject;
  /** Recorded error bodies by status: the plain INVALID_ARGUMENT for 400, else the first recording. */
  errors: Map<number, Buffer>;
  batchLimitError: Buffer;
}

const FIXTURES = new URL('../fixtures/gemini/', import.meta.url);
const MAX_BATCH = 100;
const ROUTE = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|batchEmbedContents)$/;

/** The vector for one text: it encodes the text so a test can tell which input a vector belongs to. */
export function fakeGeminiEmbedding(text: string, dimensions = 8): number[] {
  return Array.from({ length: dimensions }, (_, index) => (index === 0 ? text.length / 1000 : index === 1 ? text.charCodeAt(0) / 1000 : 0.25));
}

async function loadFixtures(): Promise<Fixtures> {
  const json = async (name: string) => JSON.parse(await readFile(new URL(name, FIXTURES), 'utf8')) as JsonObject;
  const events = async (name: string) =>
    (await readFile(new URL(name, FIXTURES), 'utf8'))
      .split('\r\n\r\n')
      .filter((block) => block.startsWith('data: '))
      .map((block) => block.slice('data: '.length));
  const errors = new Map<number, Buffer>();
  for (const name of (await readdir(new URL('errors/', FIXTURES))).sort()) {
    const status = Number(name.slice(0, 3));
    if (!errors.has(status)) errors.set(status, await readFile(new URL(`errors/${name}`, FIXTURES)));
  }
  errors.set(400, await readFile(new URL('errors/400-invalid-argument.json', FIXTURES)));
  return {
    text: await json('generate-content.json'),
    toolCall: await json('generate-content-tool-call.json'),
    textStream: await events('stream-generate-content.sse'),
    toolCallStream: await events('stream-generate-content-tool-call.sse'),
    embeddings: await json('batch-embed-contents.json'),
    errors,
    batchLimitError: await readFile(new URL('errors/400-batch-limit.json', FIXTURES)),
  };
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Google's error shape, for failures no recording covers. */
function googleError(code: number, message: string, status: string): Buffer {
  return Buffer.from(`${JSON.stringify({ error: { code, message, status } }, null, 2)}\n`);
}

function send(res: ServerResponse, status: number, body: Buffer | string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers });
  res.end(body);
}

function wantsFunctionCall(body: JsonObject): boolean {
  const tools = Array.isArray(body['tools']) ? (body['tools'] as JsonObject[]) : [];
  const declared = tools.some((tool) => Array.isArray(tool['functionDeclarations']) && tool['functionDeclarations'].length > 0);
  const mode = ((body['toolConfig'] as JsonObject | undefined)?.['functionCallingConfig'] as JsonObject | undefined)?.['mode'];
  return declared && mode !== 'NONE';
}

function endsWithFunctionResponse(body: JsonObject): boolean {
  const contents = Array.isArray(body['contents']) ? (body['contents'] as JsonObject[]) : [];
  const parts = contents.at(-1)?.['parts'];
  return Array.isArray(parts) && parts.some((part: unknown) => isObject(part) && part['functionResponse'] !== undefined);
}

/** A recorded answer (one event or the whole body) with its functionCall parts calling another function. */
function retargetFunctionCall(answer: JsonObject, call: NonNullable<FakeGeminiOptions['functionCall']>): JsonObject {
  const copy = structuredClone(answer);
  for (const candidate of (copy['candidates'] ?? []) as JsonObject[]) {
    for (const part of ((candidate['content'] as JsonObject | undefined)?.['parts'] ?? []) as JsonObject[]) {
      if (isObject(part['functionCall'])) part['functionCall'] = { name: call.name, args: call.args };
    }
  }
  return copy;
}

async function streamEvents(req: IncomingMessage, res: ServerResponse, events: string[], options: FakeGeminiOptions): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'x-content-type-options': 'nosniff' });
  res.flushHeaders();
  const { midStreamError } = options;
  // The error event takes the place of event N, and the stream ends after it.
  const sent =
    midStreamError !== undefined && midStreamError.afterEvents < events.length
      ? [...events.slice(0, midStreamError.afterEvents), JSON.stringify({ error: midStreamError.error })]
      : events;
  await writeEventStream(
    req,
    res,
    sent.map((event) => `data: ${event}\r\n\r\n`),
    { splitBytes: options.splitBytes !== false },
  );
}

function answerEmbeddings(res: ServerResponse, model: string, body: JsonObject, fixtures: Fixtures, options: FakeGeminiOptions): void {
  const requests = Array.isArray(body['requests']) ? (body['requests'] as JsonObject[]) : [];
  if (requests.length > MAX_BATCH) return send(res, 400, fixtures.batchLimitError);
  const embeddings: Array<{ values: number[] }> = [];
  for (const [index, request] of requests.entries()) {
    if (request['model'] !== `models/${model}`) {
      return send(
        res,
        400,
        googleError(
          400,
          `* BatchEmbedContentsRequest.model: unexpected model name format\n* BatchEmbedContentsRequest.requests[${index}].model: unexpected model name format\n`,
          'INVALID_ARGUMENT',
        ),
      );
    }
    const parts = ((request['content'] as JsonObject | undefined)?.['parts'] ?? []) as Array<{ text?: string }>;
    const text = parts.map((part) => part.text ?? '').join('');
    const dimensions = typeof request['outputDimensionality'] === 'number' ? request['outputDimensionality'] : 8;
    embeddings.push({ values: fakeGeminiEmbedding(text, dimensions) });
  }
  const response: JsonObject = { ...structuredClone(fixtures.embeddings), embeddings };
  if (options.embeddingUsage !== true) delete response['usageMetadata'];
  send(res, 200, JSON.stringify(response, null, 2));
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  rawBody: Buffer,
  fixtures: Fixtures,
  state: { requests: RecordedGeminiRequest[]; failures: Array<{ failure: GeminiFailure; remaining: number }>; options: () => FakeGeminiOptions },
): Promise<void> {
  const raw = rawBody.toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    body = undefined;
  }
  const url = new URL(req.url ?? '/', 'http://fake');
  state.requests.push({ method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: { ...req.headers }, body });

  const queued = state.failures[0];
  if (queued !== undefined) {
    if (--queued.remaining <= 0) state.failures.shift();
    const { status, headers } = queued.failure;
    const recorded =
      queued.failure.body === undefined
        ? (fixtures.errors.get(status) ?? googleError(status, 'Injected failure.', 'UNKNOWN'))
        : Buffer.from(JSON.stringify(queued.failure.body));
    return send(res, status, recorded, headers);
  }
  if (req.headers['x-goog-api-key'] === undefined) return send(res, 403, fixtures.errors.get(403) as Buffer);

  const route = req.method === 'POST' ? ROUTE.exec(decodeURIComponent(url.pathname)) : null;
  if (route === null) return send(res, 404, googleError(404, `Method not found: ${req.method} ${url.pathname}`, 'NOT_FOUND'));
  const [, model, method] = route as unknown as [string, string, string];
  if (!isObject(body)) return send(res, 400, googleError(400, 'Invalid JSON payload received.', 'INVALID_ARGUMENT'));
  if (method === 'batchEmbedContents') return answerEmbeddings(res, model, body, fixtures, state.options());
  if (!Array.isArray(body['contents']))
    return send(res, 400, googleError(400, '* GenerateContentRequest.contents: contents is not specified\n', 'INVALID_ARGUMENT'));
  const call = state.options().functionCall;
  const toolCall = wantsFunctionCall(body) && !(call !== undefined && endsWithFunctionResponse(body));
  const retarget = (answer: JsonObject): JsonObject => (call === undefined ? answer : retargetFunctionCall(answer, call));
  if (method === 'generateContent') return send(res, 200, JSON.stringify(toolCall ? retarget(fixtures.toolCall) : fixtures.text, null, 2));
  const events = toolCall
    ? fixtures.toolCallStream.map((event) => (call === undefined ? event : JSON.stringify(retarget(JSON.parse(event) as JsonObject))))
    : fixtures.textStream;
  if (url.searchParams.get('alt') !== 'sse') return send(res, 200, `[${events.join(',\n')}]`);
  await streamEvents(req, res, events, state.options());
}

export async function startFakeGeminiUpstream(options: FakeGeminiOptions = {}): Promise<FakeGeminiUpstream> {
  const fixtures = await loadFixtures();
  const requests: RecordedGeminiRequest[] = [];
  const failures: Array<{ failure: GeminiFailure; remaining: number }> = [];
  const server = await startFakeServer((req, res, rawBody) => handle(req, res, rawBody, fixtures, { requests, failures, options: () => upstream.options }));
  const upstream: FakeGeminiUpstream = {
    url: `${server.url}/v1beta`,
    requests,
    options,
    failNext(failure, times = 1) {
      failures.push({ failure, remaining: times });
    },
    close: () => server.close(),
  };
  return upstream;
}
