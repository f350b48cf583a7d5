// A fake OpenAI-compatible upstream for the gateway's tests.
//
// It replays recorded OpenAI wire traffic (test/fixtures/openai, see
// test/fixtures/README.md for where each recording came from) rather than
// hand-written JSON, because the point is to catch the gateway tripping over
// what the real API actually sends: `"usage":null` on every chunk, a final
// `"choices":[]` usage chunk, events split at arbitrary byte offsets, CRLF line
// ends, keep-alive comments, resets mid-stream.
//
// Behaviour in brief:
// - every request (any path) is recorded before it is answered;
// - queued `failNext` responses win over everything else;
// - POST /v1/chat/completions answers from the fixtures. A request that offers
//   `tools` (and does not say `tool_choice: "none"`) gets the recorded
//   tool-call completion; every other request gets the recorded text
//   completion. `completionText` only rewrites the text completion;
// - POST /v1/responses replays a recorded Responses API answer byte for byte:
//   the JSON Response, or with `stream: true` its event stream (named
//   `event:` lines, no `[DONE]`), cut into odd-sized pieces like chat's and
//   honouring `resetAfterEvents` and `chunkDelayMs`;
// - GET /v1/models lists a couple of models; anything else is an OpenAI 404.
//
// The server, the body reading and the event writing are json-fake-server's,
// on node:http so that nothing between the socket and the test reshapes the bytes.

import { readdir, readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { sendBytes as sendWholeBody, startFakeServer, writeAndWait, writeEventStream } from './json-fake-server.js';
import { frameComment, frameDataEvent, type LineEnding } from './sse-framing.js';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
  body: unknown;
}

export interface FailureResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface FakeOpenAIOptions {
  lineEnding?: 'lf' | 'crlf';
  splitBytes?: boolean;
  keepAliveComments?: boolean;
  omitUsage?: boolean;
  chunkDelayMs?: number;
  resetAfterEvents?: number;
  firstByteDelayMs?: number;
  completionText?: string;
  /** Prompt tokens, and how many of them were read from the prompt cache, in chat answers' usage (what a session's turns report). */
  promptUsage?: { prompt_tokens: number; cached_tokens: number };
  /** Keys it accepts as `Authorization: Bearer …`; a request with any other gets OpenAI's recorded 401. Any key when unset. */
  apiKeys?: readonly string[];
  /**
   * The tool the recorded tool call calls instead, and its arguments (re-cut into the recorded
   * number of pieces); a request whose last message is a tool result (the turn after the tool
   * ran) gets the recorded text answer, so that an agent's loop ends.
   */
  toolCall?: { name: string; arguments: Record<string, unknown> };
}

export interface FakeOpenAIUpstream {
  readonly url: string;
  readonly requests: RecordedRequest[];
  options: FakeOpenAIOptions;
  failNext(response: FailureResponse, times?: number): void;
  close(): Promise<void>;
}

type JsonObject = Record<string, unknown>;

interface StreamFixture {
  /** Every chunk except the usage chunk, in recorded order. */
  chunks: JsonObject[];
  /** The trailing `"choices":[]` chunk carrying `usage`, when recorded. */
  usageChunk: JsonObject | undefined;
}

interface Fixtures {
  completion: JsonObject;
  toolCallCompletion: JsonObject;
  embeddings: JsonObject;
  /** A recorded Response object and its event stream, replayed as bytes. */
  response: Buffer;
  responseStream: Buffer;
  stream: StreamFixture;
  toolCallStream: StreamFixture;
  /** Recorded error bodies by HTTP status, kept as bytes to replay them exactly. */
  errorBodies: ReadonlyMap<number, Buffer>;
}

interface ResolvedOptions {
  lineEnding: LineEnding;
  splitBytes: boolean;
  keepAliveComments: boolean;
  omitUsage: boolean;
  chunkDelayMs: number;
  resetAfterEvents: number | undefined;
  firstByteDelayMs: number;
  completionText: string | undefined;
  promptUsage: { prompt_tokens: number; cached_tokens: number } | undefined;
  toolCall: FakeOpenAIOptions['toolCall'];
}

/** What the fake needs to know about one chat completion request. */
interface ChatRequest {
  model: string | undefined;
  stream: boolean;
  includeUsage: boolean;
  wantsTools: boolean;
}

interface PendingFailure {
  response: FailureResponse;
  remaining: number;
}

const FIXTURE_DIR = new URL('../fixtures/openai/', import.meta.url);
/** The Responses stream recorded with `responses.json` (same vercel/ai recording), kept with the chatgpt fixtures. */
const RESPONSE_STREAM_FIXTURE = new URL('../fixtures/chatgpt/stream-text.sse', import.meta.url);
const ERROR_FIXTURE_NAME = /^(\d{3})-.+\.json$/;
/** Send a keep-alive comment before every Nth event (and before the first). */
const KEEP_ALIVE_EVERY = 4;
/** Size, in code points, of the deltas `completionText` is cut into. */
const COMPLETION_TEXT_DELTA_LENGTH = 4;

// OpenAI's own answer to an unparsable body (recorded response, see README).
const INVALID_JSON_MESSAGE =
  "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)";

// Composed in the shape of GET /v1/models; ids are real model names.
const MODEL_LIST = {
  object: 'list',
  data: [
    { id: 'gpt-4o-mini', object: 'model', created: 1721172741, owned_by: 'system' },
    { id: 'gpt-4.1', object: 'model', created: 1744316542, owned_by: 'system' },
  ],
};

// ---------------------------------------------------------------------------
// Fixtures

function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseJsonObject(text: string, what: string): JsonObject {
  const value: unknown = JSON.parse(text);
  if (!isJsonObject(value)) throw new Error(`${what} is not a JSON object`);
  return value;
}

async function readJsonFixture(name: string): Promise<JsonObject> {
  return parseJsonObject(await readFile(new URL(name, FIXTURE_DIR), 'utf8'), name);
}

function isUsageChunk(chunk: JsonObject): boolean {
  return Array.isArray(chunk.choices) && chunk.choices.length === 0 && isJsonObject(chunk.usage);
}

/** Reads the `data:` payloads of a recorded stream; the server re-frames them. */
export function parseStreamFixture(text: string): StreamFixture {
  const chunks = text
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data: '))
    .map((line) => line.slice('data: '.length))
    .filter((payload) => payload !== '[DONE]')
    .map((payload) => parseJsonObject(payload, 'stream fixture chunk'));
  return {
    chunks: chunks.filter((chunk) => !isUsageChunk(chunk)),
    usageChunk: chunks.find(isUsageChunk),
  };
}

async function readStreamFixture(name: string): Promise<StreamFixture> {
  return parseStreamFixture(await readFile(new URL(name, FIXTURE_DIR), 'utf8'));
}

async function readErrorBodies(): Promise<Map<number, Buffer>> {
  const dir = new URL('errors/', FIXTURE_DIR);
  const bodies = new Map<number, Buffer>();
  for (const name of await readdir(dir)) {
    const match = ERROR_FIXTURE_NAME.exec(name);
    if (match?.[1] !== undefined) bodies.set(Number(match[1]), await readFile(new URL(name, dir)));
  }
  return bodies;
}

async function readAllFixtures(): Promise<Fixtures> {
  const [completion, toolCallCompletion, embeddings, response, responseStream, stream, toolCallStream, errorBodies] = await Promise.all([
    readJsonFixture('chat-completion.json'),
    readJsonFixture('chat-completion-tool-call.json'),
    readJsonFixture('embeddings.json'),
    readFile(new URL('responses.json', FIXTURE_DIR)),
    readFile(RESPONSE_STREAM_FIXTURE),
    readStreamFixture('chat-completion-stream.sse'),
    readStreamFixture('chat-completion-stream-tool-call.sse'),
    readErrorBodies(),
  ]);
  return { completion, toolCallCompletion, embeddings, response, responseStream, stream, toolCallStream, errorBodies };
}

let fixturesPromise: Promise<Fixtures> | undefined;

// Fixtures are read once per test process; every response clones before editing.
function loadFixtures(): Promise<Fixtures> {
  fixturesPromise ??= readAllFixtures();
  return fixturesPromise;
}

// ---------------------------------------------------------------------------
// Building responses from fixtures

function resolveOptions(options: FakeOpenAIOptions): ResolvedOptions {
  return {
    lineEnding: options.lineEnding ?? 'lf',
    splitBytes: options.splitBytes ?? true,
    keepAliveComments: options.keepAliveComments ?? true,
    omitUsage: options.omitUsage ?? false,
    chunkDelayMs: options.chunkDelayMs ?? 0,
    resetAfterEvents: options.resetAfterEvents,
    firstByteDelayMs: options.firstByteDelayMs ?? 0,
    completionText: options.completionText,
    promptUsage: options.promptUsage,
    toolCall: options.toolCall,
  };
}

function describeChatRequest(body: JsonObject, options: ResolvedOptions): ChatRequest {
  const streamOptions = body.stream_options;
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last: unknown = messages.at(-1);
  const afterToolResult = options.toolCall !== undefined && isJsonObject(last) && last.role === 'tool';
  return {
    model: typeof body.model === 'string' ? body.model : undefined,
    stream: body.stream === true,
    // Real OpenAI only adds usage to a stream when asked for it exactly so.
    includeUsage: isJsonObject(streamOptions) && streamOptions.include_usage === true,
    wantsTools: Array.isArray(body.tools) && body.tools.length > 0 && body.tool_choice !== 'none' && !afterToolResult,
  };
}

/** The recorded tool call's chunks calling `toolCall` instead: its name, and its arguments cut into the recorded number of pieces. */
function retargetToolCallChunks(chunks: JsonObject[], toolCall: NonNullable<ResolvedOptions['toolCall']>): JsonObject[] {
  const calls = (chunk: JsonObject): JsonObject[] => {
    const toolCalls = firstDelta(chunk)?.tool_calls;
    return Array.isArray(toolCalls) ? toolCalls.filter(isJsonObject) : [];
  };
  const pieces = chunks.filter((chunk) => calls(chunk).some((call) => isJsonObject(call.function) && call.function.name === undefined)).length;
  const text = JSON.stringify(toolCall.arguments);
  const size = Math.ceil(text.length / Math.max(pieces, 1));
  let next = 0;
  return chunks.map((chunk) => {
    for (const call of calls(chunk)) {
      if (!isJsonObject(call.function)) continue;
      if (call.function.name !== undefined) call.function.name = toolCall.name;
      else {
        call.function.arguments = text.slice(next * size, (next + 1) * size);
        next++;
      }
    }
    return chunk;
  });
}

function firstChoice(chunk: JsonObject): JsonObject | undefined {
  const choices = chunk.choices;
  if (!Array.isArray(choices)) return undefined;
  const choice: unknown = choices[0];
  return isJsonObject(choice) ? choice : undefined;
}

function firstDelta(chunk: JsonObject): JsonObject | undefined {
  const delta = firstChoice(chunk)?.delta;
  return isJsonObject(delta) ? delta : undefined;
}

function carriesText(chunk: JsonObject): boolean {
  const content = firstDelta(chunk)?.content;
  return typeof content === 'string' && content.length > 0;
}

/** Cuts by code point so no delta ever holds half a surrogate pair. */
function splitText(text: string, size: number): string[] {
  const codePoints = Array.from(text);
  const pieces: string[] = [];
  for (let i = 0; i < codePoints.length; i += size) pieces.push(codePoints.slice(i, i + size).join(''));
  return pieces;
}

/**
 * Swaps the recorded text deltas for `text`, keeping the recorded role chunk,
 * finish chunk, ids and field order, so only the words change.
 */
function replaceTextDeltas(chunks: JsonObject[], text: string): JsonObject[] {
  const first = chunks.findIndex(carriesText);
  const last = chunks.length - 1 - [...chunks].reverse().findIndex(carriesText);
  const template = chunks[first];
  if (template === undefined) return chunks;
  const generated = splitText(text, COMPLETION_TEXT_DELTA_LENGTH).map((piece) => {
    const chunk = structuredClone(template);
    const delta = firstDelta(chunk);
    if (delta !== undefined) delta.content = piece;
    return chunk;
  });
  return [...chunks.slice(0, first), ...generated, ...chunks.slice(last + 1)];
}

function applyUsagePolicy(chunk: JsonObject, includeUsage: boolean): JsonObject {
  // Assigning keeps the recorded key position when the fixture already has it.
  if (includeUsage) chunk.usage = null;
  else delete chunk.usage;
  return chunk;
}

/** The JSON payloads of one streamed answer, ending with the `[DONE]` sentinel. */
function buildStreamEvents(fixture: StreamFixture, chat: ChatRequest, options: ResolvedOptions): string[] {
  const includeUsage = chat.includeUsage && !options.omitUsage;
  let chunks = fixture.chunks.map((chunk) => structuredClone(chunk));
  if (options.toolCall !== undefined && chat.wantsTools) chunks = retargetToolCallChunks(chunks, options.toolCall);
  if (options.completionText !== undefined && !chat.wantsTools) {
    chunks = replaceTextDeltas(chunks, options.completionText);
  }
  chunks = chunks.map((chunk) => applyUsagePolicy(chunk, includeUsage));
  if (includeUsage && fixture.usageChunk !== undefined) chunks.push(withPromptUsage(structuredClone(fixture.usageChunk), options));
  for (const chunk of chunks) {
    if (chat.model !== undefined) chunk.model = chat.model;
  }
  // JSON.stringify without indentation: one compact line per event, like OpenAI.
  return [...chunks.map((chunk) => JSON.stringify(chunk)), '[DONE]'];
}

function buildCompletionBody(fixture: JsonObject, chat: ChatRequest, options: ResolvedOptions): JsonObject {
  const body = structuredClone(fixture);
  if (chat.model !== undefined) body.model = chat.model;
  if (options.omitUsage) delete body.usage;
  else withPromptUsage(body, options);
  const message = firstChoice(body)?.message;
  if (options.completionText !== undefined && !chat.wantsTools && isJsonObject(message)) {
    message.content = options.completionText;
  }
  const { toolCall } = options;
  if (toolCall !== undefined && chat.wantsTools && isJsonObject(message) && Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      if (isJsonObject(call) && isJsonObject(call.function))
        Object.assign(call.function, { name: toolCall.name, arguments: JSON.stringify(toolCall.arguments) });
    }
  }
  return body;
}

/** The answer's usage with `options.promptUsage`, as OpenAI reports cache reads: `prompt_tokens_details.cached_tokens`. */
function withPromptUsage(answer: JsonObject, options: ResolvedOptions): JsonObject {
  const { promptUsage } = options;
  if (promptUsage === undefined || !isJsonObject(answer.usage)) return answer;
  const usage = answer.usage;
  const completion = typeof usage.completion_tokens === 'number' ? usage.completion_tokens : 0;
  usage.prompt_tokens = promptUsage.prompt_tokens;
  usage.total_tokens = promptUsage.prompt_tokens + completion;
  usage.prompt_tokens_details = { ...(isJsonObject(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {}), cached_tokens: promptUsage.cached_tokens };
  return answer;
}

function openAIError(message: string, type: string): JsonObject {
  return { error: { message, type, param: null, code: null } };
}

function defaultErrorType(status: number): string {
  if (status === 429) return 'requests';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

// ---------------------------------------------------------------------------
// Writing responses

function responseHeaders(extra: Record<string, string>): Record<string, string> {
  return { 'x-request-id': `req_${randomBytes(16).toString('hex')}`, ...extra };
}

function sendBytes(res: ServerResponse, status: number, bytes: Buffer, headers: Record<string, string> = {}): void {
  sendWholeBody(res, status, bytes, responseHeaders(headers));
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  // OpenAI pretty-prints its non-streamed JSON bodies, so do the same.
  sendBytes(res, status, Buffer.from(`${JSON.stringify(body, null, 2)}\n`, 'utf8'), headers);
}

function sendFailure(res: ServerResponse, failure: FailureResponse, fixtures: Fixtures): void {
  const headers = failure.headers ?? {};
  if (failure.body !== undefined) {
    sendJson(res, failure.status, failure.body, headers);
    return;
  }
  const recorded = fixtures.errorBodies.get(failure.status);
  if (recorded !== undefined) {
    sendBytes(res, failure.status, recorded, headers);
    return;
  }
  const message = STATUS_CODES[failure.status] ?? `HTTP ${failure.status}`;
  sendJson(res, failure.status, openAIError(message, defaultErrorType(failure.status)), headers);
}

function writeStreamHead(res: ServerResponse): void {
  res.writeHead(200, responseHeaders({ 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' }));
  res.flushHeaders();
}

async function streamEvents(req: IncomingMessage, res: ServerResponse, events: string[], options: ResolvedOptions): Promise<void> {
  writeStreamHead(res);
  await writeEventStream(
    req,
    res,
    events.map((data) => frameDataEvent(data, options.lineEnding)),
    {
      splitBytes: options.splitBytes,
      delayMs: options.chunkDelayMs,
      ...(options.resetAfterEvents === undefined ? {} : { resetAfterEvents: options.resetAfterEvents }),
      ...(options.keepAliveComments ? { keepAlive: { comment: frameComment('keep-alive', options.lineEnding), every: KEEP_ALIVE_EVERY } } : {}),
    },
  );
}

// ---------------------------------------------------------------------------
// Request handling

function parseJsonOrUndefined(raw: Buffer): unknown {
  try {
    const parsed: unknown = JSON.parse(raw.toString('utf8'));
    return parsed;
  } catch {
    return undefined;
  }
}

function recordRequest(req: IncomingMessage, rawBody: Buffer): RecordedRequest {
  return {
    method: req.method ?? 'GET',
    path: (req.url ?? '/').split('?')[0] ?? '/',
    headers: { ...req.headers },
    rawBody,
    body: parseJsonOrUndefined(rawBody),
  };
}

async function answerChatCompletion(req: IncomingMessage, res: ServerResponse, body: unknown, fixtures: Fixtures, options: ResolvedOptions): Promise<void> {
  if (!isJsonObject(body)) {
    sendJson(res, 400, openAIError(INVALID_JSON_MESSAGE, 'invalid_request_error'));
    return;
  }
  const chat = describeChatRequest(body, options);
  if (!chat.stream) {
    const fixture = chat.wantsTools ? fixtures.toolCallCompletion : fixtures.completion;
    sendJson(res, 200, buildCompletionBody(fixture, chat, options));
    return;
  }
  const fixture = chat.wantsTools ? fixtures.toolCallStream : fixtures.stream;
  await streamEvents(req, res, buildStreamEvents(fixture, chat, options), options);
}

/** The recorded Response, or its recorded event stream, as bytes: the gateway must pass them on unchanged. */
async function answerResponse(req: IncomingMessage, res: ServerResponse, body: unknown, fixtures: Fixtures, options: ResolvedOptions): Promise<void> {
  if (!isJsonObject(body)) {
    sendJson(res, 400, openAIError(INVALID_JSON_MESSAGE, 'invalid_request_error'));
    return;
  }
  if (body.stream !== true) {
    sendBytes(res, 200, fixtures.response);
    return;
  }
  writeStreamHead(res);
  const events = fixtures.responseStream
    .toString('utf8')
    .split('\n\n')
    .filter((event) => event !== '')
    .map((event) => `${event}\n\n`);
  // The reset is taken before an event only: a reset count past the last event ends the stream whole.
  const reset = options.resetAfterEvents !== undefined && options.resetAfterEvents < events.length ? { resetAfterEvents: options.resetAfterEvents } : {};
  await writeEventStream(req, res, events, { splitBytes: options.splitBytes, delayMs: options.chunkDelayMs, ...reset });
}

/** The vector for one input: it encodes the input so a test can tell which input a vector belongs to. */
export function fakeEmbedding(input: string | number[], dimensions = 8): number[] {
  const first = typeof input === 'string' ? input.charCodeAt(0) : (input[0] ?? 0);
  return Array.from({ length: dimensions }, (_, index) => (index === 0 ? input.length / 1000 : index === 1 ? first / 1000 : 0.5));
}

function answerEmbeddings(res: ServerResponse, body: unknown, fixtures: Fixtures, options: ResolvedOptions): void {
  if (!isJsonObject(body) || body.input === undefined) {
    sendJson(res, 400, openAIError("'input' is a required property", 'invalid_request_error'));
    return;
  }
  const raw = body.input;
  // A string, an array of strings, one token array, or an array of token arrays.
  const inputs: Array<string | number[]> =
    typeof raw === 'string'
      ? [raw]
      : Array.isArray(raw) && raw.every((item) => typeof item === 'number')
        ? [raw as number[]]
        : (raw as Array<string | number[]>);
  const dimensions = typeof body.dimensions === 'number' ? body.dimensions : 8;
  const base64 = body.encoding_format === 'base64';
  const tokens = inputs.reduce((sum, input) => sum + (typeof input === 'string' ? Math.ceil(input.length / 4) : input.length), 0);
  const response = structuredClone(fixtures.embeddings);
  response.model = typeof body.model === 'string' ? body.model : response.model;
  response.data = inputs.map((input, index) => {
    const vector = fakeEmbedding(input, dimensions);
    return { object: 'embedding', index, embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector };
  });
  if (options.omitUsage) delete response.usage;
  else response.usage = { prompt_tokens: tokens, total_tokens: tokens };
  sendJson(res, 200, response);
}

export interface MultipartPart {
  name: string;
  filename: string | null;
  contentType: string | null;
  data: Buffer;
}

/** Splits a multipart/form-data body into its parts (enough for what the gateway sends). */
export function parseMultipart(body: Buffer, contentType: string | undefined): MultipartPart[] {
  const boundary = /boundary=("?)([^";]+)\1/.exec(contentType ?? '')?.[2];
  if (boundary === undefined) return [];
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: MultipartPart[] = [];
  let start = body.indexOf(delimiter);
  while (start !== -1) {
    const next = body.indexOf(delimiter, start + delimiter.length);
    if (next === -1) break;
    const section = body.subarray(start + delimiter.length + 2, next - 2);
    const headerEnd = section.indexOf('\r\n\r\n');
    const headers = section.subarray(0, headerEnd).toString('utf8');
    parts.push({
      name: /name="([^"]*)"/.exec(headers)?.[1] ?? '',
      filename: /filename="([^"]*)"/.exec(headers)?.[1] ?? null,
      contentType: /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1] ?? null,
      data: section.subarray(headerEnd + 4),
    });
    start = next;
  }
  return parts;
}

/**
 * Answers in the asked response_format with what arrived, so tests can check the upload came
 * through whole. With `stream=true`, a model other than whisper-1 streams the text as OpenAI's
 * gpt-4o-transcribe does (a delta per word, then done with usage); whisper-1 ignores it, as
 * OpenAI's does. Translations answer the same way, saying so (`translated …`), and never stream.
 */
async function answerTranscription(res: ServerResponse, recorded: RecordedRequest, task: 'transcribe' | 'translate'): Promise<void> {
  const parts = parseMultipart(recorded.rawBody, String(recorded.headers['content-type'] ?? ''));
  const file = parts.find((part) => part.name === 'file');
  const field = (name: string) => parts.find((part) => part.name === name)?.data.toString('utf8');
  if (file === undefined || field('model') === undefined) {
    sendJson(res, 400, openAIError("'file' and 'model' are required", 'invalid_request_error'));
    return;
  }
  const text = `${task === 'translate' ? 'translated' : 'received'} ${file.data.length} bytes as ${file.filename ?? '?'}`;
  const format = field('response_format') ?? 'json';
  if (task === 'transcribe' && field('stream') === 'true' && field('model') !== 'whisper-1') {
    res.writeHead(200, responseHeaders({ 'content-type': 'text/event-stream; charset=utf-8' }));
    const words = text.split(' ');
    for (const [index, word] of words.entries()) {
      await writeAndWait(res, `data: ${JSON.stringify({ type: 'transcript.text.delta', delta: index === 0 ? word : ` ${word}` })}\n\n`);
    }
    const usage = { type: 'tokens', input_tokens: 14, output_tokens: words.length, total_tokens: 14 + words.length };
    res.end(`data: ${JSON.stringify({ type: 'transcript.text.done', text, usage })}\n\n`);
    return;
  }
  if (format === 'text' || format === 'srt' || format === 'vtt') {
    res.writeHead(200, responseHeaders({ 'content-type': 'text/plain; charset=utf-8' }));
    res.end(format === 'text' ? `${text}\n` : `1\n00:00:00,000 --> 00:00:01,000\n${text}\n`);
    return;
  }
  sendJson(res, 200, format === 'verbose_json' ? { task, language: field('language') ?? 'english', duration: 1, text, segments: [] } : { text });
}

/** A WAV file: the 44-byte RIFF header and 16-bit mono PCM of a 440 Hz tone. */
export function fakeWav(milliseconds = 200, sampleRate = 24_000): Buffer {
  const samples = Math.round((sampleRate * milliseconds) / 1000);
  const wav = Buffer.alloc(44 + samples * 2);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + samples * 2, 4);
  wav.write('WAVEfmt ', 8, 'ascii');
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20);
  wav.writeUInt16LE(1, 22);
  wav.writeUInt32LE(sampleRate, 24);
  wav.writeUInt32LE(sampleRate * 2, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(samples * 2, 40);
  for (let index = 0; index < samples; index++) wav.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * index) / sampleRate)), 44 + index * 2);
  return wav;
}

/** An MP3 of silent MPEG-1 Layer III frames (128 kbit/s, 44.1 kHz: 417 bytes each). */
export function fakeMp3(frames = 8): Buffer {
  const frame = Buffer.alloc(417);
  frame.set([0xff, 0xfb, 0x90, 0x64]);
  return Buffer.concat(Array.from({ length: frames }, () => frame));
}

const SPEECH_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  pcm: 'audio/pcm',
};

/** Audio in the asked format, written in a few pieces (with `chunkDelayMs` between) like a real TTS stream. */
async function answerSpeech(res: ServerResponse, body: unknown, options: ResolvedOptions): Promise<void> {
  if (!isJsonObject(body) || typeof body.input !== 'string' || typeof body.voice !== 'string') {
    sendJson(res, 400, openAIError("'input' and 'voice' are required properties", 'invalid_request_error'));
    return;
  }
  const format = typeof body.response_format === 'string' ? body.response_format : 'mp3';
  const audio = format === 'wav' ? fakeWav() : format === 'mp3' ? fakeMp3() : Buffer.from(`${format} audio`);
  res.writeHead(200, responseHeaders({ 'content-type': SPEECH_TYPES[format] ?? 'application/octet-stream', 'transfer-encoding': 'chunked' }));
  const pieces = 4;
  const size = Math.ceil(audio.length / pieces);
  for (let index = 0; index < pieces; index++) {
    if (res.destroyed) return;
    if (index > 0 && options.chunkDelayMs > 0) await sleep(options.chunkDelayMs);
    await writeAndWait(res, audio.subarray(index * size, (index + 1) * size));
  }
  res.end();
}

/** A deterministic relevance: the share of the query's words found in the document. */
export function fakeRelevance(query: string, document: string): number {
  const words = new Set(document.toLowerCase().match(/\w+/g) ?? []);
  const queryWords = query.toLowerCase().match(/\w+/g) ?? [];
  return queryWords.length === 0 ? 0 : queryWords.filter((word) => words.has(word)).length / queryWords.length;
}

/**
 * The Jina/Cohere-style answer vLLM gives at /rerank, except that results come back in input order
 * (vLLM sorts them): that way a test proves the gateway does the sorting.
 */
function answerRerank(res: ServerResponse, body: unknown, options: ResolvedOptions): void {
  if (!isJsonObject(body) || typeof body.query !== 'string' || !Array.isArray(body.documents)) {
    sendJson(res, 400, openAIError('query and documents are required', 'invalid_request_error'));
    return;
  }
  const query = body.query;
  const documents = body.documents.map(String);
  const response: JsonObject = {
    id: `rerank-${randomBytes(8).toString('hex')}`,
    model: typeof body.model === 'string' ? body.model : 'reranker',
    results: documents.map((document, index) => ({ index, document: { text: document }, relevance_score: fakeRelevance(query, document) })),
  };
  if (!options.omitUsage)
    response.usage = { total_tokens: documents.reduce((sum, document) => sum + Math.ceil(document.length / 4), Math.ceil(query.length / 4)) };
  sendJson(res, 200, response);
}

interface UpstreamState {
  fixtures: Fixtures;
  requests: RecordedRequest[];
  failures: PendingFailure[];
  currentOptions(): FakeOpenAIOptions;
}

function takeFailure(failures: PendingFailure[]): FailureResponse | undefined {
  const head = failures[0];
  if (head === undefined) return undefined;
  head.remaining -= 1;
  if (head.remaining <= 0) failures.shift();
  return head.response;
}

async function handleRequest(req: IncomingMessage, res: ServerResponse, rawBody: Buffer, state: UpstreamState): Promise<void> {
  const recorded = recordRequest(req, rawBody);
  state.requests.push(recorded);
  const failure = takeFailure(state.failures);
  if (failure !== undefined) {
    sendFailure(res, failure, state.fixtures);
    return;
  }
  const { apiKeys } = state.currentOptions();
  if (apiKeys !== undefined && !apiKeys.some((key) => recorded.headers['authorization'] === `Bearer ${key}`)) {
    sendFailure(res, { status: 401 }, state.fixtures);
    return;
  }
  // Options are read per request because tests change them between requests.
  const options = resolveOptions(state.currentOptions());
  if (options.firstByteDelayMs > 0) await sleep(options.firstByteDelayMs);
  const route = `${recorded.method} ${recorded.path}`;
  if (route === 'POST /v1/chat/completions') {
    await answerChatCompletion(req, res, recorded.body, state.fixtures, options);
  } else if (route === 'POST /v1/responses') {
    await answerResponse(req, res, recorded.body, state.fixtures, options);
  } else if (route === 'POST /v1/audio/transcriptions') {
    await answerTranscription(res, recorded, 'transcribe');
  } else if (route === 'POST /v1/audio/translations') {
    await answerTranscription(res, recorded, 'translate');
  } else if (route === 'POST /v1/audio/speech') {
    await answerSpeech(res, recorded.body, options);
  } else if (route === 'POST /v1/rerank') {
    answerRerank(res, recorded.body, options);
  } else if (route === 'POST /v1/embeddings') {
    answerEmbeddings(res, recorded.body, state.fixtures, options);
  } else if (route === 'GET /v1/models') {
    sendJson(res, 200, MODEL_LIST);
  } else {
    sendJson(res, 404, openAIError(`Invalid URL (${route})`, 'invalid_request_error'));
  }
}

// ---------------------------------------------------------------------------
// Server lifecycle

export async function startFakeOpenAIUpstream(options: FakeOpenAIOptions = {}): Promise<FakeOpenAIUpstream> {
  const fixtures = await loadFixtures();
  const requests: RecordedRequest[] = [];
  const failures: PendingFailure[] = [];
  let upstream: FakeOpenAIUpstream | undefined;
  const state: UpstreamState = {
    fixtures,
    requests,
    failures,
    // Read through the handle so a test that replaces `options` is honoured.
    currentOptions: () => upstream?.options ?? options,
  };
  const server = await startFakeServer((req, res, rawBody) => handleRequest(req, res, rawBody, state));
  upstream = {
    url: `${server.url}/v1`,
    requests,
    options,
    failNext(response: FailureResponse, times = 1): void {
      if (!Number.isInteger(times) || times < 1) throw new RangeError('failNext times must be a positive integer');
      failures.push({ response, remaining: times });
    },
    close: () => server.close(),
  };
  return upstream;
}
