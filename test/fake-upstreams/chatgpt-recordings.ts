// The ChatGPT fake's recordings (test/fixtures/chatgpt) and the Responses event streams it builds
// from them: recorded events are templates; only ids, text, usage and the fields the request
// decides are rewritten.

import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';

/** Size, in code points, of the text and argument deltas. */
const DELTA_LENGTH = 4;

// ---------------------------------------------------------------------------
// Fixtures

export type JsonObject = Record<string, unknown>;

export interface SseEvent {
  event: string;
  data: JsonObject;
}

export interface Fixtures {
  textStream: SseEvent[];
  functionCallStream: SseEvent[];
  /** Recorded header names and values of a 429 usage_limit_reached answer. */
  quotaHeaders: Record<string, string>;
  usageLimitBody: JsonObject;
  streamMustBeTrue: Buffer;
  storeMustBeFalse: Buffer;
  tokenExpired: Buffer;
  tokenInvalidated: Buffer;
  refreshTokenReused: Buffer;
  refreshTokenInvalidated: Buffer;
}

const FIXTURE_DIR = new URL('../fixtures/chatgpt/', import.meta.url);

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function parseJsonObject(text: string, what: string): JsonObject {
  const value: unknown = JSON.parse(text);
  if (!isJsonObject(value)) throw new Error(`${what} is not a JSON object`);
  return value;
}

/** Splits `event: X\ndata: {...}\n\n` blocks (the framing of the recorded streams). */
export function parseSseText(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice('event:'.length).trim();
      else if (line.startsWith('data:')) data.push(line.slice('data:'.length).replace(/^ /, ''));
    }
    if (data.length === 0) continue;
    const payload = parseJsonObject(data.join('\n'), 'SSE event data');
    events.push({ event: event ?? String(payload.type), data: payload });
  }
  return events;
}

async function readFixture(name: string): Promise<Buffer> {
  return readFile(new URL(name, FIXTURE_DIR));
}

async function readAllFixtures(): Promise<Fixtures> {
  const [text, functionCall, headers, usageLimit, streamTrue, storeFalse, expired, invalidated, reused, refreshInvalidated] = await Promise.all([
    readFixture('stream-text.sse'),
    readFixture('stream-function-call.sse'),
    readFixture('usage-limit-headers.json'),
    readFixture('errors/429-usage-limit-reached.json'),
    readFixture('errors/400-stream-must-be-true.json'),
    readFixture('errors/400-store-must-be-false.json'),
    readFixture('errors/401-token-expired.json'),
    readFixture('errors/401-token-invalidated.json'),
    readFixture('oauth/401-refresh-token-reused.json'),
    readFixture('oauth/401-refresh-token-invalidated.json'),
  ]);
  const quotaHeaders: Record<string, string> = {};
  for (const [name, value] of Object.entries(parseJsonObject(headers.toString('utf8'), 'usage-limit-headers.json'))) {
    quotaHeaders[name] = String(value);
  }
  return {
    textStream: parseSseText(text.toString('utf8')),
    functionCallStream: parseSseText(functionCall.toString('utf8')),
    quotaHeaders,
    usageLimitBody: parseJsonObject(usageLimit.toString('utf8'), '429 fixture'),
    streamMustBeTrue: streamTrue,
    storeMustBeFalse: storeFalse,
    tokenExpired: expired,
    tokenInvalidated: invalidated,
    refreshTokenReused: reused,
    refreshTokenInvalidated: refreshInvalidated,
  };
}

let fixturesPromise: Promise<Fixtures> | undefined;

export function loadFixtures(): Promise<Fixtures> {
  fixturesPromise ??= readAllFixtures();
  return fixturesPromise;
}

function template(events: SseEvent[], type: string): JsonObject {
  const found = events.find((event) => event.data.type === type);
  if (found === undefined) throw new Error(`recorded stream has no ${type} event`);
  return structuredClone(found.data);
}

export function objectField(object: JsonObject, key: string): JsonObject {
  const value = object[key];
  if (!isJsonObject(value)) throw new Error(`recorded event has no object "${key}"`);
  return value;
}

// ---------------------------------------------------------------------------
// Building the SSE answer from the recorded templates

export interface StreamContext {
  request: JsonObject;
  responseId: string;
  createdAt: number;
  nowSeconds: number;
}

export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

export function randomAlphanumeric(length: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(length);
  return Array.from(bytes, (byte) => alphabet[byte % alphabet.length]).join('');
}

/** Cuts by code point so no delta ever holds half a surrogate pair. */
function splitText(text: string, size: number): string[] {
  const codePoints = Array.from(text);
  const pieces: string[] = [];
  for (let i = 0; i < codePoints.length; i += size) pieces.push(codePoints.slice(i, i + size).join(''));
  return pieces;
}

function estimateTokens(value: unknown): number {
  const text = typeof value === 'string' ? value : JSON.stringify(value ?? '');
  return Math.max(1, Math.ceil(text.length / 4));
}

/** The recorded `response` object with the fields this request decides. */
function responseObject(recorded: JsonObject, context: StreamContext, status: 'in_progress' | 'completed'): JsonObject {
  const response = structuredClone(objectField(recorded, 'response'));
  const request = context.request;
  response.id = context.responseId;
  response.created_at = context.createdAt;
  response.status = status;
  if ('completed_at' in response) response.completed_at = status === 'completed' ? context.nowSeconds : null;
  if (typeof request.model === 'string') response.model = request.model;
  response.instructions = typeof request.instructions === 'string' ? request.instructions : null;
  response.store = false;
  response.prompt_cache_key = typeof request.prompt_cache_key === 'string' ? request.prompt_cache_key : null;
  if (Array.isArray(request.tools)) response.tools = request.tools;
  if (request.tool_choice !== undefined) response.tool_choice = request.tool_choice;
  if (typeof request.parallel_tool_calls === 'boolean') response.parallel_tool_calls = request.parallel_tool_calls;
  const reasoning = response.reasoning;
  if (isJsonObject(request.reasoning) && isJsonObject(reasoning)) response.reasoning = { ...reasoning, ...request.reasoning };
  return response;
}

function completedResponse(recorded: JsonObject, context: StreamContext, outputText: string): JsonObject {
  const response = responseObject(recorded, context, 'completed');
  // The Codex backend sends store:false answers with an empty `output` here;
  // the finished items only arrive in response.output_item.done.
  response.output = [];
  const inputTokens = estimateTokens(context.request.input);
  const outputTokens = estimateTokens(outputText);
  const usage = isJsonObject(response.usage) ? response.usage : {};
  usage.input_tokens = inputTokens;
  const inputDetails = isJsonObject(usage.input_tokens_details) ? usage.input_tokens_details : {};
  for (const key of Object.keys(inputDetails)) inputDetails[key] = 0;
  inputDetails.cached_tokens = 0;
  usage.input_tokens_details = inputDetails;
  usage.output_tokens = outputTokens;
  usage.output_tokens_details = { reasoning_tokens: 0 };
  usage.total_tokens = inputTokens + outputTokens;
  response.usage = usage;
  return response;
}

function withSequence(events: JsonObject[]): JsonObject[] {
  return events.map((event, index) => {
    if ('sequence_number' in event) event.sequence_number = index;
    return event;
  });
}

export function buildTextEvents(recorded: SseEvent[], context: StreamContext, text: string): JsonObject[] {
  const itemId = `msg_${randomHex(24)}`;
  const created = template(recorded, 'response.created');
  created.response = responseObject(created, context, 'in_progress');
  const inProgress = template(recorded, 'response.in_progress');
  inProgress.response = responseObject(inProgress, context, 'in_progress');
  const itemAdded = template(recorded, 'response.output_item.added');
  objectField(itemAdded, 'item').id = itemId;
  const partAdded = template(recorded, 'response.content_part.added');
  partAdded.item_id = itemId;
  const deltaTemplate = template(recorded, 'response.output_text.delta');
  const deltas = splitText(text, DELTA_LENGTH).map((piece) => {
    const delta = structuredClone(deltaTemplate);
    delta.item_id = itemId;
    delta.delta = piece;
    return delta;
  });
  const textDone = template(recorded, 'response.output_text.done');
  textDone.item_id = itemId;
  textDone.text = text;
  const partDone = template(recorded, 'response.content_part.done');
  partDone.item_id = itemId;
  objectField(partDone, 'part').text = text;
  const itemDone = template(recorded, 'response.output_item.done');
  const item = objectField(itemDone, 'item');
  item.id = itemId;
  const content = item.content;
  if (Array.isArray(content) && isJsonObject(content[0])) content[0].text = text;
  const completed = template(recorded, 'response.completed');
  completed.response = completedResponse(completed, context, text);
  return withSequence([created, inProgress, itemAdded, partAdded, ...deltas, textDone, partDone, itemDone, completed]);
}

export function buildFunctionCallEvents(recorded: SseEvent[], context: StreamContext, name: string, args: string): JsonObject[] {
  const itemId = `fc_${randomHex(24)}`;
  const callId = `call_${randomAlphanumeric(24)}`;
  const created = template(recorded, 'response.created');
  created.response = responseObject(created, context, 'in_progress');
  const inProgress = template(recorded, 'response.in_progress');
  inProgress.response = responseObject(inProgress, context, 'in_progress');
  const itemAdded = template(recorded, 'response.output_item.added');
  Object.assign(objectField(itemAdded, 'item'), { id: itemId, arguments: '', call_id: callId, name });
  const deltaTemplate = template(recorded, 'response.function_call_arguments.delta');
  const deltas = splitText(args, DELTA_LENGTH).map((piece) => {
    const delta = structuredClone(deltaTemplate);
    delta.delta = piece;
    delta.item_id = itemId;
    // Padding that hides the delta's length; random like the real one.
    if ('obfuscation' in delta) delta.obfuscation = randomAlphanumeric(16 - Math.min(piece.length, 8));
    return delta;
  });
  const argsDone = template(recorded, 'response.function_call_arguments.done');
  argsDone.arguments = args;
  argsDone.item_id = itemId;
  const itemDone = template(recorded, 'response.output_item.done');
  Object.assign(objectField(itemDone, 'item'), { id: itemId, arguments: args, call_id: callId, name });
  const completed = template(recorded, 'response.completed');
  completed.response = completedResponse(completed, context, args);
  return withSequence([created, inProgress, itemAdded, ...deltas, argsDone, itemDone, completed]);
}

export function frameEvent(event: JsonObject): Buffer {
  return Buffer.from(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`, 'utf8');
}
