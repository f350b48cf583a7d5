import { describe, it, expect } from 'vitest';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { readFile } from 'node:fs/promises';
import { startFakeOpenAIUpstream, type FakeOpenAIOptions, type FakeOpenAIUpstream } from './openai-upstream.js';
import { splitIntoPieces } from './sse-framing.js';

// ---------------------------------------------------------------------------
// A small HTTP client that keeps every `data` chunk as it arrived, so the tests
// can see how the fake cut its writes.

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  chunks: Buffer[];
  body: Buffer;
  /** false when the body ended before the server finished it (a reset). */
  complete: boolean;
  error: Error | undefined;
}

interface RequestInit {
  method?: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
}

function send(url: string, init: RequestInit = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    // agent: false gives each request its own connection, so a reset in one
    // test cannot leak into a pooled socket used by the next request.
    const req = httpRequest(url, { method: init.method ?? 'GET', headers: init.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let error: Error | undefined;
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', (err: Error) => {
        error = err;
      });
      res.on('close', () => {
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          chunks,
          body: Buffer.concat(chunks),
          complete: res.complete,
          error,
        });
      });
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

function postChat(upstream: FakeOpenAIUpstream, body: unknown, path = '/chat/completions'): Promise<RawResponse> {
  return send(`${upstream.url}${path}`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
  });
}

async function withUpstream(options: FakeOpenAIOptions, run: (upstream: FakeOpenAIUpstream) => Promise<void>): Promise<void> {
  const upstream = await startFakeOpenAIUpstream(options);
  try {
    await run(upstream);
  } finally {
    await upstream.close();
  }
}

// ---------------------------------------------------------------------------
// A spec-following SSE parser (WHATWG "event stream interpretation"): CR, LF
// and CRLF line ends, including a CRLF split across two chunks; comment lines;
// a blank line dispatches only if data was seen; UTF-8 decoded as a stream.

interface SseEvent {
  event: string;
  data: string;
}

class SseParser {
  readonly events: SseEvent[] = [];
  comments = 0;
  // fatal: a multi-byte character broken by the server would throw here.
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private line = '';
  private lastWasCR = false;
  private dataLines: string[] = [];
  private eventType = '';

  push(bytes: Uint8Array): void {
    this.feed(this.decoder.decode(bytes, { stream: true }));
  }

  end(): void {
    this.feed(this.decoder.decode());
  }

  private feed(text: string): void {
    for (const char of text) {
      if (this.lastWasCR) {
        this.lastWasCR = false;
        if (char === '\n') continue;
      }
      if (char === '\r' || char === '\n') {
        this.lastWasCR = char === '\r';
        this.processLine(this.line);
        this.line = '';
      } else {
        this.line += char;
      }
    }
  }

  private processLine(line: string): void {
    if (line === '') {
      if (this.dataLines.length > 0) this.events.push({ event: this.eventType || 'message', data: this.dataLines.join('\n') });
      this.dataLines = [];
      this.eventType = '';
      return;
    }
    if (line.startsWith(':')) {
      this.comments += 1;
      return;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.dataLines.push(value);
    if (field === 'event') this.eventType = value;
  }
}

function parseSse(response: RawResponse): SseParser {
  const parser = new SseParser();
  // Feed chunk by chunk so the parser meets the same cuts a gateway would.
  for (const chunk of response.chunks) parser.push(chunk);
  parser.end();
  return parser;
}

// ---------------------------------------------------------------------------
// JSON narrowing helpers (no `any`).

type JsonObject = Record<string, unknown>;

function asObject(value: unknown): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`expected a JSON object, got ${JSON.stringify(value)}`);
  }
  return Object.fromEntries(Object.entries(value));
}

function asArray(value: unknown): unknown[] {
  if (!Array.isArray(value)) throw new Error(`expected a JSON array, got ${JSON.stringify(value)}`);
  return value;
}

function jsonBody(response: RawResponse): JsonObject {
  return asObject(JSON.parse(response.body.toString('utf8')));
}

/** The JSON chunks of a parsed stream; asserts it ended with `[DONE]`. */
function chunksOf(parser: SseParser): JsonObject[] {
  const payloads = parser.events.map((event) => event.data);
  expect(payloads.at(-1)).toBe('[DONE]');
  return payloads.slice(0, -1).map((payload) => asObject(JSON.parse(payload)));
}

function firstDelta(chunk: JsonObject): JsonObject | undefined {
  const choice = asArray(chunk.choices)[0];
  return choice === undefined ? undefined : asObject(asObject(choice).delta);
}

function contentOf(chunks: JsonObject[]): string {
  return chunks
    .map((chunk) => firstDelta(chunk)?.content)
    .filter((content): content is string => typeof content === 'string')
    .join('');
}

const FIXTURES = new URL('../fixtures/openai/', import.meta.url);

async function fixtureJson(name: string): Promise<JsonObject> {
  return asObject(JSON.parse(await readFile(new URL(name, FIXTURES), 'utf8')));
}

/** Expectations derived straight from the recorded stream, independent of the server's parsing. */
async function recordedStream(): Promise<{ content: string; usage: JsonObject; eventCount: number }> {
  const text = await readFile(new URL('chat-completion-stream.sse', FIXTURES), 'utf8');
  const payloads = text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => line.slice(6));
  const chunks = payloads.filter((payload) => payload !== '[DONE]').map((payload) => asObject(JSON.parse(payload)));
  const usageChunk = chunks.find((chunk) => asArray(chunk.choices).length === 0);
  if (usageChunk === undefined) throw new Error('stream fixture has no usage chunk');
  return { content: contentOf(chunks), usage: asObject(usageChunk.usage), eventCount: payloads.length };
}

const MESSAGES = [{ role: 'user', content: 'hello' }];
const STREAM_WITH_USAGE = { model: 'my-model', messages: MESSAGES, stream: true, stream_options: { include_usage: true } };

// ---------------------------------------------------------------------------

describe('fake OpenAI upstream: non-streamed chat completions', () => {
  it('answers with the recorded completion, the request model and the recorded usage', async () => {
    const fixture = await fixtureJson('chat-completion.json');
    await withUpstream({}, async (upstream) => {
      const response = await postChat(upstream, { model: 'gpt-4o-mini', messages: MESSAGES });
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      const body = jsonBody(response);
      expect(body.model).toBe('gpt-4o-mini');
      expect(body.id).toBe(fixture.id);
      expect(body.choices).toEqual(fixture.choices);
      expect(body.usage).toEqual(fixture.usage);
    });
  });

  it('uses completionText (non-ASCII) as the message content', async () => {
    const text = 'héllo wörld — 你好 🚀';
    await withUpstream({ completionText: text }, async (upstream) => {
      const body = jsonBody(await postChat(upstream, { model: 'm', messages: MESSAGES }));
      const choice = asObject(asArray(body.choices)[0]);
      expect(asObject(choice.message).content).toBe(text);
    });
  });

  it('has no usage key at all with omitUsage', async () => {
    await withUpstream({ omitUsage: true }, async (upstream) => {
      const body = jsonBody(await postChat(upstream, { model: 'm', messages: MESSAGES }));
      expect(Object.keys(body)).not.toContain('usage');
    });
  });

  it('answers a request offering tools with the recorded tool call', async () => {
    await withUpstream({}, async (upstream) => {
      const tools = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }];
      const body = jsonBody(await postChat(upstream, { model: 'm', messages: MESSAGES, tools }));
      const choice = asObject(asArray(body.choices)[0]);
      expect(choice.finish_reason).toBe('tool_calls');
      const call = asObject(asArray(asObject(choice.message).tool_calls)[0]);
      expect(asObject(call.function).arguments).toBe('{"path":"README.md"}');
    });
  });
});

describe('fake OpenAI upstream: streamed chat completions', () => {
  it('streams events that reassemble into the recorded content (LF)', async () => {
    const recorded = await recordedStream();
    await withUpstream({}, async (upstream) => {
      const response = await postChat(upstream, STREAM_WITH_USAGE);
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
      expect(response.complete).toBe(true);
      expect(response.body.includes('\r')).toBe(false);
      const parser = parseSse(response);
      const chunks = chunksOf(parser);
      expect(contentOf(chunks)).toBe(recorded.content);
      expect(parser.events).toHaveLength(recorded.eventCount);
      for (const chunk of chunks) expect(chunk.model).toBe('my-model');
      // Keep-alive comments were on the wire and ignored by the parser.
      expect(parser.comments).toBeGreaterThan(0);
      expect(response.body.toString('utf8')).toContain(': keep-alive');
    });
  });

  it('streams the same events with CRLF line ends', async () => {
    const recorded = await recordedStream();
    await withUpstream({ lineEnding: 'crlf' }, async (upstream) => {
      const response = await postChat(upstream, STREAM_WITH_USAGE);
      const raw = response.body.toString('utf8');
      expect(raw).toContain('\r\n\r\n');
      // Every LF on the wire belongs to a CRLF pair.
      expect(/(^|[^\r])\n/.test(raw)).toBe(false);
      const parser = parseSse(response);
      expect(contentOf(chunksOf(parser))).toBe(recorded.content);
      expect(parser.events).toHaveLength(recorded.eventCount);
    });
  });

  it('splits its writes into more pieces than there are events', async () => {
    await withUpstream({}, async (upstream) => {
      const response = await postChat(upstream, STREAM_WITH_USAGE);
      const parser = parseSse(response);
      expect(response.chunks.length).toBeGreaterThan(parser.events.length);
      // Some chunk must end somewhere other than an event boundary.
      const lf = '\n'.charCodeAt(0);
      expect(response.chunks.some((chunk) => chunk[chunk.length - 1] !== lf)).toBe(true);
    });
  });

  it('cuts multi-byte UTF-8 characters across pieces and still delivers completionText intact', async () => {
    const text = 'héllo wörld — 你好 🚀';
    const pieces = splitIntoPieces(Buffer.from('🚀🚀🚀', 'utf8'));
    expect(Buffer.concat(pieces).toString('utf8')).toBe('🚀🚀🚀');
    // A 1-byte first piece of a 4-byte character is not valid UTF-8 on its own.
    expect(() => new TextDecoder('utf-8', { fatal: true }).decode(pieces[0])).toThrow();

    await withUpstream({ completionText: text }, async (upstream) => {
      const chunks = chunksOf(parseSse(await postChat(upstream, STREAM_WITH_USAGE)));
      expect(contentOf(chunks)).toBe(text);
      // The text is carried in deltas of about four characters.
      const deltas = chunks.map((chunk) => firstDelta(chunk)?.content).filter((c) => typeof c === 'string' && c !== '');
      expect(deltas.length).toBeGreaterThan(3);
    });
  });

  it('sends usage:null on every chunk and a final usage chunk only with include_usage', async () => {
    const recorded = await recordedStream();
    await withUpstream({}, async (upstream) => {
      const withUsage = chunksOf(parseSse(await postChat(upstream, STREAM_WITH_USAGE)));
      const last = withUsage.at(-1);
      if (last === undefined) throw new Error('no chunks');
      expect(last.choices).toEqual([]);
      expect(last.usage).toEqual(recorded.usage);
      for (const chunk of withUsage.slice(0, -1)) {
        expect(Object.keys(chunk)).toContain('usage');
        expect(chunk.usage).toBeNull();
      }

      const bodies = [
        { model: 'm', messages: MESSAGES, stream: true },
        { model: 'm', messages: MESSAGES, stream: true, stream_options: { include_usage: false } },
      ];
      for (const body of bodies) {
        const chunks = chunksOf(parseSse(await postChat(upstream, body)));
        expect(chunks.length).toBe(withUsage.length - 1);
        for (const chunk of chunks) {
          expect(Object.keys(chunk)).not.toContain('usage');
          expect(asArray(chunk.choices).length).toBeGreaterThan(0);
        }
      }
    });
  });

  it('never sends usage with omitUsage, even when asked for it', async () => {
    await withUpstream({ omitUsage: true }, async (upstream) => {
      const response = await postChat(upstream, STREAM_WITH_USAGE);
      expect(response.body.toString('utf8')).not.toContain('"usage"');
      const chunks = chunksOf(parseSse(response));
      for (const chunk of chunks) expect(asArray(chunk.choices).length).toBeGreaterThan(0);
    });
  });

  it('streams the recorded tool call when the request offers tools', async () => {
    await withUpstream({}, async (upstream) => {
      const tools = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }];
      const chunks = chunksOf(parseSse(await postChat(upstream, { ...STREAM_WITH_USAGE, tools })));
      const args = chunks
        .flatMap((chunk) => {
          const calls = firstDelta(chunk)?.tool_calls;
          return calls === undefined ? [] : asArray(calls);
        })
        .map((call) => asObject(asObject(call).function).arguments)
        .join('');
      expect(args).toBe('{"path":"README.md"}');
      expect(chunks.at(-1)?.choices).toEqual([]);
    });
  });

  it('resets the connection after resetAfterEvents events', async () => {
    await withUpstream({ resetAfterEvents: 3 }, async (upstream) => {
      const response = await postChat(upstream, STREAM_WITH_USAGE);
      expect(response.status).toBe(200);
      expect(response.complete).toBe(false);
      expect(response.error).toBeInstanceOf(Error);
      const parser = parseSse(response);
      expect(parser.events).toHaveLength(3);
      expect(parser.events.map((event) => event.data)).not.toContain('[DONE]');
    });
  });

  it('honours firstByteDelayMs and chunkDelayMs', async () => {
    await withUpstream({ firstByteDelayMs: 120 }, async (upstream) => {
      const started = Date.now();
      await postChat(upstream, { model: 'm', messages: MESSAGES });
      expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    });
    await withUpstream({ chunkDelayMs: 15, splitBytes: false }, async (upstream) => {
      const started = Date.now();
      const parser = parseSse(await postChat(upstream, STREAM_WITH_USAGE));
      // n events have n - 1 gaps between them.
      expect(Date.now() - started).toBeGreaterThanOrEqual((parser.events.length - 1) * 15 - 20);
    });
  });

  it('reads its options per request, so tests can change them in between', async () => {
    await withUpstream({}, async (upstream) => {
      const lf = await postChat(upstream, STREAM_WITH_USAGE);
      expect(lf.body.includes('\r')).toBe(false);
      upstream.options.lineEnding = 'crlf';
      const crlf = await postChat(upstream, STREAM_WITH_USAGE);
      expect(crlf.body.toString('utf8')).toContain('\r\n');
    });
  });
});

describe('fake OpenAI upstream: failures and other routes', () => {
  it('failNext answers with the recorded 429 body and the given retry-after', async () => {
    const recorded429 = await fixtureJson('errors/429-rate-limit-exceeded.json');
    await withUpstream({}, async (upstream) => {
      upstream.failNext({ status: 429, headers: { 'retry-after': '2' } });
      const failed = await postChat(upstream, STREAM_WITH_USAGE);
      expect(failed.status).toBe(429);
      expect(failed.headers['retry-after']).toBe('2');
      expect(jsonBody(failed)).toEqual(recorded429);

      const next = await postChat(upstream, { model: 'm', messages: MESSAGES });
      expect(next.status).toBe(200);
    });
  });

  it('failNext covers `times` requests to any path, with a custom or recorded body', async () => {
    const recorded500 = await fixtureJson('errors/500-server-error.json');
    await withUpstream({}, async (upstream) => {
      upstream.failNext({ status: 500 }, 2);
      upstream.failNext({ status: 503, body: { error: { message: 'overloaded', type: 'server_error' } } });
      expect(jsonBody(await send(`${upstream.url}/models`))).toEqual(recorded500);
      expect((await postChat(upstream, { model: 'm', messages: MESSAGES })).status).toBe(500);
      const custom = await postChat(upstream, { model: 'm', messages: MESSAGES });
      expect(custom.status).toBe(503);
      expect(jsonBody(custom)).toEqual({ error: { message: 'overloaded', type: 'server_error' } });
      expect((await postChat(upstream, { model: 'm', messages: MESSAGES })).status).toBe(200);
    });
  });

  it('falls back to an OpenAI-shaped error for a status without a recording', async () => {
    await withUpstream({}, async (upstream) => {
      upstream.failNext({ status: 418 });
      const response = await send(`${upstream.url}/models`);
      expect(response.status).toBe(418);
      const error = asObject(jsonBody(response).error);
      expect(typeof error.message).toBe('string');
      expect(error.type).toBe('invalid_request_error');
    });
  });

  it('rejects an unparsable body with a 400 invalid_request_error', async () => {
    await withUpstream({}, async (upstream) => {
      const response = await send(`${upstream.url}/chat/completions`, {
        method: 'POST',
        body: '{"model": "m", "messages": [',
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status).toBe(400);
      expect(asObject(jsonBody(response).error).type).toBe('invalid_request_error');
    });
  });

  it('lists models and 404s unknown paths in OpenAI shape', async () => {
    await withUpstream({}, async (upstream) => {
      const models = jsonBody(await send(`${upstream.url}/models`));
      expect(models.object).toBe('list');
      expect(asArray(models.data).length).toBeGreaterThanOrEqual(2);

      const missing = await send(`${upstream.url}/files`, { method: 'POST', body: '{}' });
      expect(missing.status).toBe(404);
      expect(asObject(jsonBody(missing).error).message).toBe('Invalid URL (POST /v1/files)');
    });
  });

  it('records every request, on every path, before answering', async () => {
    await withUpstream({}, async (upstream) => {
      const sent = JSON.stringify({ model: 'm', messages: MESSAGES });
      await send(`${upstream.url}/chat/completions?api-version=1`, {
        method: 'POST',
        body: sent,
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
      });
      await send(`${upstream.url}/models`);
      await send(`${upstream.url}/nowhere`, { method: 'POST', body: 'not json' });

      expect(upstream.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/chat/completions', 'GET /v1/models', 'POST /v1/nowhere']);
      const [chat, models, nowhere] = upstream.requests;
      expect(chat?.headers.authorization).toBe('Bearer sk-test');
      expect(chat?.rawBody.toString('utf8')).toBe(sent);
      expect(chat?.body).toEqual({ model: 'm', messages: MESSAGES });
      expect(models?.rawBody.length).toBe(0);
      expect(models?.body).toBeUndefined();
      expect(nowhere?.rawBody.toString('utf8')).toBe('not json');
      expect(nowhere?.body).toBeUndefined();
    });
  });
});

describe('fake OpenAI upstream: the Responses API', () => {
  const RESPONSE = new URL('../fixtures/openai/responses.json', import.meta.url);
  const RESPONSE_STREAM = new URL('../fixtures/chatgpt/stream-text.sse', import.meta.url);

  it('answers with the recorded Response, byte for byte', async () => {
    await withUpstream({}, async (upstream) => {
      const response = await postChat(upstream, { model: 'gpt-4o-mini', input: 'Say OK' }, '/responses');
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe('application/json');
      expect(response.body.equals(await readFile(RESPONSE))).toBe(true);
      expect(upstream.requests[0]?.body).toEqual({ model: 'gpt-4o-mini', input: 'Say OK' });
    });
  });

  it('streams the recorded events byte for byte, in more pieces than events', async () => {
    await withUpstream({}, async (upstream) => {
      const response = await postChat(upstream, { model: 'gpt-4o-mini', input: 'Say OK', stream: true }, '/responses');
      expect(response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      const recorded = await readFile(RESPONSE_STREAM);
      expect(response.body.equals(recorded)).toBe(true);
      const parser = new SseParser();
      parser.push(response.body);
      parser.end();
      expect(parser.events.map((event) => event.event)).toEqual(parser.events.map((event) => (JSON.parse(event.data) as { type: string }).type));
      expect(parser.events.at(-1)?.event).toBe('response.completed');
      expect(response.chunks.length).toBeGreaterThan(parser.events.length);
    });
  });

  it('resets the stream after resetAfterEvents events', async () => {
    await withUpstream({ resetAfterEvents: 2 }, async (upstream) => {
      const response = await postChat(upstream, { model: 'gpt-4o-mini', input: 'Say OK', stream: true }, '/responses');
      expect(response.complete).toBe(false);
      const parser = new SseParser();
      parser.push(response.body);
      expect(parser.events.map((event) => event.event)).toEqual(['response.created', 'response.in_progress']);
    });
  });
});
