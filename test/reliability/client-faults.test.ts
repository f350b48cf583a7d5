import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { request } from 'undici';
import {
  BODY_TIMEOUT_MS,
  FAULT_POOL_SIZE,
  LAG_BOUND_MS,
  MESSAGES,
  PAUSED_STREAM_TIMEOUT_MS,
  startFaultHarness,
  whileProbing,
  type FaultHarness,
} from './fault-harness.js';
import { openSocket, postHead, rawExchange } from './raw-client.js';

/**
 * What a hostile or broken client sends must be refused with the right status and error body,
 * without stalling other requests, holding resources for ever, or losing request-log rows.
 */
let harness: FaultHarness;
beforeAll(async () => {
  harness = await startFaultHarness();
});
afterAll(async () => {
  await harness?.close();
});

function nested(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

describe('bodies nested too deep', () => {
  it('are refused with 400 invalid_body before anything else, on every route, and logged', async () => {
    for (const [path, body] of [
      ['/v1/chat/completions', `{"model":"openai-ok","messages":[{"role":"user","content":"Hi"}],"metadata":{"deep":${nested(6_000)}}}`],
      ['/v1/embeddings', `{"model":"embed","input":"hi","extra":${nested(6_000)}}`],
    ] as const) {
      const answer = await harness.post(path, body);
      expect(answer.status, path).toBe(400);
      expect(answer.json.error).toEqual({
        message: 'The request body nests objects and arrays more than 64 levels deep.',
        type: 'invalid_request_error',
        code: 'invalid_body',
        param: null,
      });
      expect(await harness.logRow(answer.requestId)).toMatchObject({ status: 400, errorCode: 'invalid_body' });
    }
  });

  it('are accepted up to the limit, with brackets inside strings not counted', async () => {
    const body = `{"model":"openai-ok","messages":[{"role":"user","content":"${'['.repeat(500)}"}],"response_format":${nested(60)}}`;
    const answer = await harness.post('/v1/chat/completions', body);
    expect(answer.status).toBe(200);
  });
});

describe('inputs built to make the tokenizer quadratic', () => {
  it('are answered while /health keeps answering and the event loop is never held', async () => {
    const bodies = [
      JSON.stringify({ model: 'embed', input: 'a'.repeat(150_000) }),
      JSON.stringify({ model: 'no-such-model', input: 'a'.repeat(100_000) }),
      JSON.stringify({ model: 'embed', input: Array.from({ length: 40 }, () => 'a'.repeat(16_000)) }),
    ];
    const probe = await whileProbing(harness, () => Promise.all(bodies.map((body) => harness.post('/v1/embeddings', body))));
    const [single, unknownModel, many] = probe.result;
    expect(single?.status).toBe(422);
    expect(single?.json['detail']).toEqual([
      { loc: ['body', 'input'], msg: 'Input has more than 2048 tokens; at most 2048 are allowed per input', type: 'too_long' },
    ]);
    // The model is looked up before any input is counted.
    expect(unknownModel?.status).toBe(404);
    expect(unknownModel?.json.error?.code).toBe('model_not_found');
    // 40 inputs of 16,000 `a` are about 2,000 tokens each: valid, counted off the event loop, embedded.
    expect(many?.status).toBe(200);
    expect((many?.json['data'] as unknown[]).length).toBe(40);
    for (const answer of probe.result) expect(await harness.logRow(answer.requestId)).toMatchObject({ status: answer.status });
    expect(probe.healthFailures).toBe(0);
    expect(probe.healthChecks).toBeGreaterThan(0);
    expect(probe.maxLagMs).toBeLessThan(LAG_BOUND_MS);
  });

  it('an input of 10 MB is refused by its length alone, without tokenizing', async () => {
    // Reading and parsing a body this size is JSON work the body limit bounds (docs/reliability.md);
    // what must not happen is the tokenizer pass that never ended.
    const probe = await whileProbing(harness, () => harness.post('/v1/embeddings', JSON.stringify({ model: 'embed', input: 'a'.repeat(10 * 1024 * 1024) })));
    expect(probe.result.status).toBe(422);
    expect(probe.result.json['detail']).toEqual([
      { loc: ['body', 'input'], msg: 'Input has more than 2048 tokens; at most 2048 are allowed per input', type: 'too_long' },
    ]);
    expect(probe.healthFailures).toBe(0);
    expect(await harness.logRow(probe.result.requestId)).toMatchObject({ status: 422, errorCode: 'validation_error' });
  });
});

describe('a request body that stops arriving', () => {
  for (const path of ['/v1/chat/completions', '/v1/embeddings']) {
    it(`${path}: is answered 408 request_timeout after server.body_timeout_ms of silence, the connection closed, the row written`, async () => {
      const body = JSON.stringify({ model: path.includes('chat') ? 'openai-ok' : 'embed', messages: MESSAGES, input: 'x' });
      const answer = await rawExchange(harness.gateway.url, [postHead(path, harness.token, body.length), body.slice(0, 10), BODY_TIMEOUT_MS * 3]);
      expect(answer.status).toBe(408);
      expect(answer.headers['connection']).toBe('close');
      expect(JSON.parse(answer.body)).toEqual({
        error: { message: 'The request body stopped arriving; send it again.', type: 'invalid_request_error', code: 'request_timeout', param: null },
      });
      expect(answer.closed).toBe(true);
      expect(await harness.logRow(answer.headers['x-request-id'] as string)).toMatchObject({ status: 408, errorCode: 'request_timeout' });
    });
  }

  it('is never cut while it keeps arriving, however long the whole upload takes', async () => {
    const body = JSON.stringify({ model: 'openai-ok', messages: MESSAGES });
    const parts: Array<string | number> = [postHead('/v1/chat/completions', harness.token, body.length)];
    // Twice the timeout in all, never silent for more than half of it.
    const piece = Math.ceil(body.length / 8);
    for (let offset = 0; offset < body.length; offset += piece) parts.push(BODY_TIMEOUT_MS / 4, body.slice(offset, offset + piece));
    const answer = await rawExchange(harness.gateway.url, parts);
    expect(answer.status).toBe(200);
  });
});

describe('clients that stop reading a stream', () => {
  /** Sends a stream request and never reads the answer: the socket is paused from the start. */
  async function neverRead(token: string): Promise<Socket> {
    const socket = await openSocket(harness.gateway.url);
    socket.pause();
    const body = JSON.stringify({ model: 'openai-endless-stream', messages: MESSAGES, stream: true });
    socket.write(
      postHead('/v1/chat/completions', token, Buffer.byteLength(body), { 'x-request-id': `never-read-${Math.random().toString(36).slice(2)}` }) + body,
    );
    return socket;
  }

  it('hold at most half of a credential per token, and only for server.paused_stream_timeout_ms', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on('warning', onWarning);
    const before = harness.logLines.length;
    const sockets = await Promise.all([neverRead(harness.token), neverRead(harness.token), neverRead(harness.token)]);
    try {
      // Two of the token's streams now wait for their readers; the third was ended as soon as it had to wait.
      await waitFor(() => harness.logLines.slice(before).some((line) => line['code'] === 'paused_stream_limit'), 'the third stream to be refused');
      expect(harness.upstream.openConnections).toBeLessThanOrEqual(FAULT_POOL_SIZE);
      // Another token still gets the rest of the pool.
      const other = await harness.post('/v1/chat/completions', { model: 'openai-ok', messages: MESSAGES, stream: true }, { token: harness.otherToken });
      expect(other.status).toBe(200);
      expect(other.text).toContain('data: [DONE]');
      // Past the bound the waiting streams are ended, and their upstream connections closed.
      await waitFor(
        () => harness.logLines.slice(before).filter((line) => line['code'] === 'paused_stream_timeout').length === 2,
        'the paused streams to time out',
        PAUSED_STREAM_TIMEOUT_MS * 5,
      );
      // The upstream stops generating: the connections that carried them are closed (undici then
      // opens a fresh idle one in their place, which is why connections are not counted here).
      await waitFor(() => harness.upstream.endlessStreams === 0, 'the upstream streams to end');
    } finally {
      for (const socket of sockets) socket.destroy();
      process.off('warning', onWarning);
    }
    const lines = harness.logLines.slice(before).filter((line) => typeof line['code'] === 'string' && String(line['code']).startsWith('paused_stream'));
    expect(lines.map((line) => line['level'])).toEqual([40, 40, 40]);
    for (const line of lines) {
      const row = await harness.logRow(line['requestId'] as string);
      expect(row.errorCode).toBe(line['code']);
      expect(row.tokenId).not.toBeNull();
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });

  it('a slow reader that keeps reading is never cut, and waiting on it many times adds no listeners', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on('warning', onWarning);
    const socket = await openSocket(harness.gateway.url);
    let received = 0;
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    const body = JSON.stringify({ model: 'openai-endless-stream', messages: MESSAGES, stream: true });
    socket.write(postHead('/v1/chat/completions', harness.token, Buffer.byteLength(body)) + body);
    try {
      // Read in short bursts for 1.5 s: the gateway fills the socket and waits for it dozens of times.
      socket.pause();
      const until = Date.now() + 1_500;
      while (Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 40));
        socket.resume();
        await new Promise((resolve) => setTimeout(resolve, 2));
        socket.pause();
      }
      expect(socket.destroyed).toBe(false);
      expect(received).toBeGreaterThan(1024 * 1024);
    } finally {
      socket.destroy();
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });
});

describe('requests refused before routing', () => {
  it('answer in the one error shape: 431 for huge headers, 400 for broken framing', async () => {
    const cases: Array<{ request: string; status: number; code: string }> = [
      { request: `GET /health HTTP/1.1\r\nhost: x\r\nx-filler: ${'a'.repeat(20_000)}\r\n\r\n`, status: 431, code: 'request_headers_too_large' },
      ...['/v1/embeddings', '/v1/chat/completions'].flatMap((path) => {
        const head = `POST ${path} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${harness.token}\r\ncontent-type: application/json\r\n`;
        return [
          { request: `${head}transfer-encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n`, status: 400, code: 'malformed_request' },
          { request: `${head}content-length: 5\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n`, status: 400, code: 'malformed_request' },
        ];
      }),
    ];
    for (const { request: text, status, code } of cases) {
      const answer = await rawExchange(harness.gateway.url, [text]);
      expect(answer.status, code).toBe(status);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code, type: 'invalid_request_error', param: null } });
      expect(answer.closed).toBe(true);
    }
  });
});

describe('what error messages echo', () => {
  it('a 5 MB model name comes back cut to its first characters', async () => {
    const name = 'm'.repeat(5 * 1024 * 1024);
    const answer = await harness.post('/v1/chat/completions', { model: name, messages: MESSAGES });
    expect(answer.status).toBe(404);
    expect(answer.json.error?.message).toMatch(
      new RegExp(`^The model '${'m'.repeat(64)}…' \\(${name.length} characters\\) does not exist\\. Chat models this API key may use: `),
    );
    expect(answer.text.length).toBeLessThan(1_200);
    const retrieve = await request(`${harness.gateway.url}/v1/models/${'x'.repeat(10_000)}`, { headers: { authorization: `Bearer ${harness.token}` } });
    expect(retrieve.statusCode).toBe(404);
    expect((await retrieve.body.text()).length).toBeLessThan(400);
  });
});

describe('Connection: close on a streamed answer', () => {
  it('is honoured: the answer says so and the connection ends with the stream', async () => {
    const body = JSON.stringify({ model: 'openai-ok', messages: MESSAGES, stream: true });
    const answer = await rawExchange(
      harness.gateway.url,
      [postHead('/v1/chat/completions', harness.token, body.length, { connection: 'close' }) + body],
      2_000,
    );
    expect(answer.status).toBe(200);
    expect(answer.headers['connection']).toBe('close');
    expect(answer.body).toContain('data: [DONE]');
    expect(answer.closed).toBe(true);
  });
});

describe('a client that leaves in the middle of a multipart upload', () => {
  const boundary = 'switchyard-boundary';
  const fileHead = `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.wav"\r\ncontent-type: audio/wav\r\n\r\n`;
  const cuts = {
    'before the first part': '',
    'inside a field': `--${boundary}\r\ncontent-disposition: form-data; name="model"\r\n\r\nwhisp`,
    'inside the file': fileHead + 'RIFF'.padEnd(4096, '\0'),
    'after the file, before the closing boundary': `${fileHead}${'RIFF'.padEnd(4096, '\0')}\r\n`,
  };
  for (const [where, sent] of Object.entries(cuts)) {
    it(`${where}: is logged as a 499 without an error-level line`, async () => {
      const before = harness.logLines.length;
      const socket = await openSocket(harness.gateway.url);
      socket.on('error', () => undefined);
      const id = `leaves-mid-upload-${Date.now()}`;
      socket.write(
        'POST /v1/audio/transcriptions HTTP/1.1\r\nhost: x\r\n' +
          `authorization: Bearer ${harness.token}\r\nx-request-id: ${id}\r\n` +
          `content-type: multipart/form-data; boundary=${boundary}\r\ncontent-length: 1000000\r\n\r\n` +
          sent,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      socket.destroy();
      const row = await harness.logRow(id);
      expect(row).toMatchObject({ status: 499, errorCode: 'client_closed_request' });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(harness.logLines.slice(before).filter((line) => (line['level'] as number) >= 50)).toEqual([]);
    });
  }
});

/** Waits (polling every 10 ms, up to `timeoutMs`) until `condition` holds, naming `what` if it never does. */
function waitFor(condition: () => boolean, what: string, timeoutMs = 3_000): Promise<void> {
  return vi.waitFor(() => expect(condition(), `timed out waiting for ${what}`).toBe(true), { timeout: timeoutMs, interval: 10 });
}
