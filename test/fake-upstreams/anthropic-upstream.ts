// A fake Anthropic Messages API for the gateway's tests.
//
// It replays recorded Anthropic wire traffic (test/fixtures/anthropic, see
// test/fixtures/README.md for where each recording came from): named SSE
// events (`event: …` + `data: …`), `ping` events, usage split between
// `message_start` and `message_delta`, and Anthropic's error envelope.
//
// Behaviour in brief:
// - every request (any path) is recorded before it is answered;
// - a request without the expected `x-api-key` gets the recorded 401;
// - queued `failNext` responses win over everything else;
// - POST /v1/messages answers from the fixtures: a request that offers `tools`
//   (and does not say `tool_choice: {type: "none"}`) gets the recorded
//   tool_use message or stream, every other request the recorded text one.
//   `streamFixture` / `messageFixture` pick another recording;
// - with `toolUse`, the recorded tool_use answer calls that tool with that input
//   instead (its input JSON re-cut into the recorded number of pieces), and a
//   request whose last message carries a `tool_result` (the turn after the tool
//   ran) gets the recorded text answer: an agent's loop ends;
// - POST /v1/messages/count_tokens answers `{"input_tokens": <the body's length>}`;
// - a query string (Claude Code's `?beta=true`) does not change the route;
// - anything else is a 404 in Anthropic's error envelope.
//
// The server, the body reading and the event writing are json-fake-server's,
// on node:http so that nothing between the socket and the test reshapes the bytes.

import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startFakeServer, writeEventStream } from './json-fake-server.js';

export interface RecordedAnthropicRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The body's bytes as they arrived. */
  rawBody: Buffer;
  body: unknown;
}

export interface AnthropicFailure {
  status: number;
  /** An object is sent as JSON; without a body, the recorded error for the status (if any) is sent. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface FakeAnthropicOptions {
  /** Cut the SSE body into odd-sized writes (default true). */
  splitBytes?: boolean;
  lineEnding?: 'lf' | 'crlf';
  /** A file under test/fixtures/anthropic/ to stream instead of the default choice. */
  streamFixture?: string;
  /** A file under test/fixtures/anthropic/ to answer non-streamed requests with. */
  messageFixture?: string;
  /** The tool the recorded tool_use answer calls, and its input; see the header. */
  toolUse?: { name: string; input: Record<string, unknown> };
}

export interface FakeAnthropicUpstream {
  /** The origin, which is what `base_url` holds for Anthropic (the adapter adds /v1/messages). */
  readonly url: string;
  readonly requests: RecordedAnthropicRequest[];
  options: FakeAnthropicOptions;
  failNext(failure: AnthropicFailure, times?: number): void;
  /** Forgets the failures queued and not yet sent. */
  clearFailures(): void;
  close(): Promise<void>;
}

const FIXTURE_DIR = new URL('../fixtures/anthropic/', import.meta.url);
const ERROR_FIXTURES: Record<number, string> = {
  400: 'errors/400-invalid-request-error.json',
  401: 'errors/401-authentication-error.json',
  429: 'errors/429-rate-limit-error.json',
  500: 'errors/500-api-error.json',
  529: 'errors/529-overloaded-error.json',
};
// Composed in Anthropic's error envelope; not a recording.
const NOT_FOUND = { type: 'error', error: { type: 'not_found_error', message: 'Not Found' } };

function readFixture(name: string): Promise<Buffer> {
  return readFile(new URL(name, FIXTURE_DIR));
}

function wantsTools(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const { tools, tool_choice: toolChoice } = body as { tools?: unknown; tool_choice?: { type?: unknown } };
  return Array.isArray(tools) && tools.length > 0 && toolChoice?.type !== 'none';
}

function endsWithToolResult(body: unknown): boolean {
  const messages = (body as { messages?: unknown }).messages;
  const last: unknown = Array.isArray(messages) ? messages.at(-1) : undefined;
  const content = (last as { content?: unknown } | undefined)?.content;
  return Array.isArray(content) && content.some((block: unknown) => (block as { type?: unknown }).type === 'tool_result');
}

/** `text` cut into `count` pieces (the last ones empty when it is short). */
function cut(text: string, count: number): string[] {
  const size = Math.ceil(text.length / Math.max(count, 1));
  return Array.from({ length: Math.max(count, 1) }, (_, index) => text.slice(index * size, (index + 1) * size));
}

/** A recorded tool_use stream calling another tool: the tool_use block's name and id, and its input's pieces. */
function retargetToolUseStream(bytes: Buffer, toolUse: NonNullable<FakeAnthropicOptions['toolUse']>): Buffer {
  const blocks = bytes.toString('utf8').split('\n\n');
  const parse = (block: string): Record<string, unknown> | null => {
    const line = block.split('\n').find((candidate) => candidate.startsWith('data: '));
    return line === undefined ? null : (JSON.parse(line.slice('data: '.length)) as Record<string, unknown>);
  };
  let toolIndex: unknown;
  const inputDeltas = blocks.filter((block) => {
    const event = parse(block);
    const delta = event?.['delta'] as { type?: unknown } | undefined;
    return delta?.type === 'input_json_delta';
  }).length;
  const pieces = cut(JSON.stringify(toolUse.input), inputDeltas);
  return Buffer.from(
    blocks
      .map((block) => {
        const event = parse(block);
        if (event === null) return block;
        const contentBlock = event['content_block'] as Record<string, unknown> | undefined;
        if (event['type'] === 'content_block_start' && contentBlock?.['type'] === 'tool_use') {
          toolIndex = event['index'];
          event['content_block'] = { ...contentBlock, id: `toolu_${randomBytes(12).toString('hex')}`, name: toolUse.name };
        } else if (event['type'] === 'content_block_delta' && event['index'] === toolIndex) {
          event['delta'] = { type: 'input_json_delta', partial_json: pieces.shift() ?? '' };
        } else {
          return block;
        }
        return block.replace(/^data: .*$/m, `data: ${JSON.stringify(event)}`);
      })
      .join('\n\n'),
  );
}

export async function startFakeAnthropicUpstream(options: { apiKey: string } & FakeAnthropicOptions): Promise<FakeAnthropicUpstream> {
  const { apiKey, ...initialOptions } = options;
  const requests: RecordedAnthropicRequest[] = [];
  const failures: Array<{ failure: AnthropicFailure; remaining: number }> = [];
  const upstream = { options: initialOptions as FakeAnthropicOptions };

  const sendJson = (response: ServerResponse, status: number, body: Buffer | string, headers: Record<string, string> = {}): void => {
    response.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_fake_anthropic', ...headers });
    response.end(body);
  };

  const fail = async (response: ServerResponse, failure: AnthropicFailure): Promise<void> => {
    let body: Buffer | string;
    if (failure.body === undefined) {
      const fixture = ERROR_FIXTURES[failure.status];
      body =
        fixture === undefined
          ? JSON.stringify({ type: 'error', error: { type: 'api_error', message: `status ${failure.status}` } })
          : await readFixture(fixture);
    } else {
      body = typeof failure.body === 'string' ? failure.body : JSON.stringify(failure.body);
    }
    sendJson(response, failure.status, body, failure.headers);
  };

  const stream = async (request: IncomingMessage, response: ServerResponse, fixture: string): Promise<void> => {
    let bytes = await readFixture(fixture);
    const { toolUse } = upstream.options;
    if (toolUse !== undefined && fixture === 'stream-tool-use.sse') bytes = retargetToolUseStream(bytes, toolUse);
    if (upstream.options.lineEnding === 'crlf') bytes = Buffer.from(bytes.toString('utf8').replace(/\r?\n/g, '\r\n'));
    response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'request-id': 'req_fake_anthropic' });
    if (upstream.options.splitBytes === false) {
      response.end(bytes);
      return;
    }
    // Each piece its own write and a turn of the event loop, so they reach the socket as separate packets.
    await writeEventStream(request, response, [bytes], { splitBytes: true });
  };

  const handle = async (request: IncomingMessage, response: ServerResponse, rawBody: Buffer): Promise<void> => {
    const raw = rawBody.toString('utf8');
    let body: unknown = undefined;
    try {
      body = raw === '' ? undefined : (JSON.parse(raw) as unknown);
    } catch {
      body = raw;
    }
    const path = request.url ?? '/';
    requests.push({ method: request.method ?? '', path, headers: request.headers, rawBody, body });

    if (request.headers['x-api-key'] !== apiKey) return fail(response, { status: 401 });
    const queued = failures[0];
    if (queued !== undefined) {
      if (--queued.remaining <= 0) failures.shift();
      return fail(response, queued.failure);
    }
    // Claude Code adds `?beta=true`; the API routes by path alone.
    const route = path.split('?')[0];
    if (request.method === 'POST' && route === '/v1/messages/count_tokens' && typeof body === 'object' && body !== null) {
      // Composed in the API's documented shape; not a recording. A count a test can check: the body's length.
      return sendJson(response, 200, JSON.stringify({ input_tokens: rawBody.length }));
    }
    if (request.method !== 'POST' || route !== '/v1/messages') return sendJson(response, 404, JSON.stringify(NOT_FOUND));
    if (typeof body !== 'object' || body === null) {
      // Composed in Anthropic's error envelope; not a recording.
      return sendJson(
        response,
        400,
        JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'The request body is not valid JSON.' } }),
      );
    }
    const tools = wantsTools(body) && !(upstream.options.toolUse !== undefined && endsWithToolResult(body));
    if ((body as { stream?: unknown }).stream === true) {
      return stream(request, response, upstream.options.streamFixture ?? (tools ? 'stream-tool-use.sse' : 'stream-text.sse'));
    }
    const message = await readFixture(upstream.options.messageFixture ?? (tools ? 'message-tool-use.json' : 'message.json'));
    const { toolUse } = upstream.options;
    if (toolUse === undefined || !tools) return sendJson(response, 200, message);
    const recorded = JSON.parse(message.toString('utf8')) as { content: Array<Record<string, unknown>> };
    recorded.content = recorded.content.map((block) => (block['type'] === 'tool_use' ? { ...block, name: toolUse.name, input: toolUse.input } : block));
    return sendJson(response, 200, JSON.stringify(recorded));
  };

  const server = await startFakeServer((request, response, rawBody) =>
    handle(request, response, rawBody).catch((error: unknown) => {
      if (!response.headersSent) sendJson(response, 500, JSON.stringify({ type: 'error', error: { type: 'api_error', message: String(error) } }));
      else response.destroy();
    }),
  );

  return {
    url: server.url,
    requests,
    get options() {
      return upstream.options;
    },
    set options(value: FakeAnthropicOptions) {
      upstream.options = value;
    },
    failNext(failure, times = 1) {
      failures.push({ failure, remaining: times });
    },
    clearFailures() {
      failures.length = 0;
    },
    close: () => server.close(),
  };
}
