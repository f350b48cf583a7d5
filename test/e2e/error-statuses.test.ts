import OpenAI from 'openai';
import { Client } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startOpenAIFakeGateway, type OpenAIFakeGateway } from '../support/start-openai-fake-gateway.js';
import { conformanceErrors } from '../support/openai-conformance.js';
import { resetCredentials } from '../support/reset-credentials.js';

let harness: OpenAIFakeGateway;
let token: string;

beforeAll(async () => {
  harness = await startOpenAIFakeGateway();
  token = await harness.createToken({ team: 'errors' });
});
afterAll(async () => {
  await harness.close();
});
beforeEach(() => {
  resetCredentials(harness.gateway);
  harness.upstream.options = {};
  harness.upstream.requests.length = 0;
});

interface Answer {
  status: number;
  headers: Headers;
  body: { error: { message: string; type: string; code: string; param: string | null }; detail?: unknown };
}

async function call(path: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const response = await fetch(`${harness.gateway.url}${path}`, {
    method: init.method ?? 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  const body = (await response.json()) as Answer['body'];
  expect(conformanceErrors('ErrorResponse', body)).toEqual([]);
  return { status: response.status, headers: response.headers, body };
}

function chat(body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Answer> {
  return call('/v1/chat/completions', { body: JSON.stringify(body), headers });
}

const hi = [{ role: 'user', content: 'Hi' }];

describe('400 bad request', () => {
  it('refuses a body that is not JSON', async () => {
    const answer = await call('/v1/chat/completions', { body: '{"model": "gpt-4o-mini", ' });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: 'invalid_json', type: 'invalid_request_error', param: null });
    expect((await harness.logRow(answer.headers.get('x-request-id'))).errorCode).toBe('invalid_json');
  });

  it('refuses an empty body, and JSON that is not an object', async () => {
    expect((await call('/v1/chat/completions', { body: '' })).body.error.code).toBe('invalid_json');
    for (const body of ['[1, 2]', '"text"', '42', 'null']) {
      const answer = await call('/v1/chat/completions', { body });
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe('invalid_body');
    }
  });

  it('refuses a content type other than JSON', async () => {
    const answer = await call('/v1/chat/completions', { body: 'model=gpt-4o-mini', headers: { 'content-type': 'text/plain' } });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('unsupported_media_type');
  });

  it('refuses a model of another type, naming its type', async () => {
    const answer = await chat({ model: 'text-embedding-3-small', messages: hi });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: 'model_type_mismatch', param: 'model' });
    expect(answer.body.error.message).toContain('embedding model');
    expect(harness.upstream.requests).toHaveLength(0);
  });

  it('passes on the upstream refusing the request as invalid, with its message', async () => {
    harness.upstream.failNext({ status: 400 });
    const answer = await chat({ model: 'gpt-4o-mini', messages: hi });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('upstream_bad_request');
    expect(answer.body.error.message.length).toBeGreaterThan(0);
  });

  it('raises BadRequestError in the SDK', async () => {
    const client = harness.clientFor(token);
    await expect(client.chat.completions.create({ model: 'text-embedding-3-small', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toBeInstanceOf(
      OpenAI.BadRequestError,
    );
  });
});

describe('401 unauthenticated', () => {
  const cases: Array<[string, () => Promise<Record<string, string>>, string]> = [
    ['missing', async () => ({ authorization: '' }), 'missing_api_key'],
    ['not a bearer credential', async () => ({ authorization: `Basic ${token}` }), 'invalid_api_key'],
    ['malformed', async () => ({ authorization: 'Bearer sk-not-ours' }), 'invalid_api_key'],
    ['unknown', async () => ({ authorization: `Bearer svc_${'A'.repeat(43)}` }), 'invalid_api_key'],
    [
      'revoked',
      async () => {
        const revoked = await harness.gateway.tokens.create({ team: 'errors' });
        await harness.gateway.tokens.revoke(revoked.record.id);
        return { authorization: `Bearer ${revoked.secret}` };
      },
      'revoked_api_key',
    ],
    [
      'expired',
      async () => {
        const expired = await harness.gateway.tokens.create({ team: 'errors', expiresInMs: 1 });
        await new Promise((resolve) => setTimeout(resolve, 5));
        return { authorization: `Bearer ${expired.secret}` };
      },
      'expired_api_key',
    ],
  ];
  for (const [name, headers, code] of cases) {
    it(`refuses a ${name} token on every authenticated endpoint`, async () => {
      const auth = await headers();
      for (const [path, method] of [
        ['/v1/chat/completions', 'POST'],
        ['/v1/models', 'GET'],
        ['/v1/models/gpt-4o-mini', 'GET'],
      ] as const) {
        const answer = await call(path, {
          method,
          headers: auth,
          ...(method === 'POST' ? { body: JSON.stringify({ model: 'gpt-4o-mini', messages: hi }) } : {}),
        });
        expect(answer.status).toBe(401);
        expect(answer.body.error).toMatchObject({ code, type: 'authentication_error' });
      }
      expect(harness.upstream.requests).toHaveLength(0);
    });
  }

  it('raises AuthenticationError in the SDK', async () => {
    await expect(harness.clientFor(`svc_${'B'.repeat(43)}`).models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('needs no token for /health', async () => {
    const response = await fetch(`${harness.gateway.url}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
  });
});

describe('403 forbidden', () => {
  it('refuses a token without the endpoint scope', async () => {
    const readOnly = await harness.createToken({ scopes: ['models:read'] });
    const answer = await chat({ model: 'gpt-4o-mini', messages: hi }, { authorization: `Bearer ${readOnly}` });
    expect(answer.status).toBe(403);
    expect(answer.body.error).toMatchObject({ code: 'insufficient_scope', type: 'permission_error' });
    expect(answer.body.error.message).toContain('"chat"');
    const noModels = await harness.createToken({ scopes: ['chat'] });
    expect((await call('/v1/models', { method: 'GET', headers: { authorization: `Bearer ${noModels}` } })).status).toBe(403);
  });

  it('refuses a model outside the token allow-list', async () => {
    const restricted = await harness.createToken({ models: ['pooled-chat'] });
    const answer = await chat({ model: 'gpt-4o-mini', messages: hi }, { authorization: `Bearer ${restricted}` });
    expect(answer.status).toBe(403);
    expect(answer.body.error).toMatchObject({ code: 'model_not_allowed', param: 'model' });
    expect(harness.upstream.requests).toHaveLength(0);
    await expect(
      harness.clientFor(restricted).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }),
    ).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
  });
});

describe('404 not found', () => {
  it('refuses an unknown model', async () => {
    const answer = await chat({ model: 'gpt-9', messages: hi });
    expect(answer.status).toBe(404);
    expect(answer.body.error).toMatchObject({ code: 'model_not_found', type: 'not_found_error', param: 'model' });
    await expect(harness.clientFor(token).chat.completions.create({ model: 'gpt-9', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toBeInstanceOf(
      OpenAI.NotFoundError,
    );
  });

  it('answers an unknown path in the same error format', async () => {
    const answer = await call('/v1/does-not-exist', { method: 'GET' });
    expect(answer.status).toBe(404);
    expect(answer.body.error.code).toBe('route_not_found');
    expect(answer.headers.get('x-request-id')).toMatch(/^req_/);
  });
});

describe('413 payload too large', () => {
  it('refuses a body over the server cap', async () => {
    const answer = await chat({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x'.repeat(17 * 1024 * 1024) }] });
    expect(answer.status).toBe(413);
    expect(answer.body.error.code).toBe('payload_too_large');
    expect(harness.upstream.requests).toHaveLength(0);
  });
});

describe('422 validation', () => {
  const refused: Array<[string, Record<string, unknown>, (string | number)[], string]> = [
    ['model missing', { messages: hi }, ['body', 'model'], 'missing'],
    ['model not a string', { model: 42, messages: hi }, ['body', 'model'], 'string_type'],
    ['messages missing', { model: 'gpt-4o-mini' }, ['body', 'messages'], 'missing'],
    ['messages empty', { model: 'gpt-4o-mini', messages: [] }, ['body', 'messages'], 'too_short'],
    ['messages not a list', { model: 'gpt-4o-mini', messages: 'Hi' }, ['body', 'messages'], 'list_type'],
    ['unknown role', { model: 'gpt-4o-mini', messages: [{ role: 'robot', content: 'Hi' }] }, ['body', 'messages', 0, 'role'], 'enum'],
    ['user content missing', { model: 'gpt-4o-mini', messages: [{ role: 'user' }] }, ['body', 'messages', 0, 'content'], 'missing'],
    [
      'tool message without tool_call_id',
      { model: 'gpt-4o-mini', messages: [{ role: 'tool', content: '{}' }] },
      ['body', 'messages', 0, 'tool_call_id'],
      'missing',
    ],
    ['temperature above 2', { model: 'gpt-4o-mini', messages: hi, temperature: 2.01 }, ['body', 'temperature'], 'less_than_equal'],
    ['temperature below 0', { model: 'gpt-4o-mini', messages: hi, temperature: -0.01 }, ['body', 'temperature'], 'greater_than_equal'],
    ['temperature a string', { model: 'gpt-4o-mini', messages: hi, temperature: 'hot' }, ['body', 'temperature'], 'float_type'],
    ['top_p above 1', { model: 'gpt-4o-mini', messages: hi, top_p: 1.01 }, ['body', 'top_p'], 'less_than_equal'],
    ['top_p below 0', { model: 'gpt-4o-mini', messages: hi, top_p: -0.1 }, ['body', 'top_p'], 'greater_than_equal'],
    ['max_tokens zero', { model: 'gpt-4o-mini', messages: hi, max_tokens: 0 }, ['body', 'max_tokens'], 'greater_than_equal'],
    ['max_tokens fractional', { model: 'gpt-4o-mini', messages: hi, max_tokens: 1.5 }, ['body', 'max_tokens'], 'int_type'],
    ['stream not a boolean', { model: 'gpt-4o-mini', messages: hi, stream: 'yes' }, ['body', 'stream'], 'bool_type'],
  ];
  for (const [name, body, loc, type] of refused) {
    it(`refuses ${name}, naming the field`, async () => {
      const answer = await chat(body);
      expect(answer.status).toBe(422);
      expect(answer.body.error.code).toBe('validation_error');
      const field = loc.slice(1).reduce<string>((text, part) => (typeof part === 'number' ? `${text}[${part}]` : text ? `${text}.${part}` : part), '');
      expect(answer.body.error.param).toBe(field);
      expect(answer.body.detail).toContainEqual(expect.objectContaining({ loc, type }));
      expect(harness.upstream.requests).toHaveLength(0);
    });
  }

  it('accepts every boundary value', async () => {
    for (const extra of [
      { temperature: 0 },
      { temperature: 2 },
      { top_p: 0 },
      { top_p: 1 },
      { max_tokens: 1 },
      { temperature: null, top_p: null, max_tokens: null },
    ]) {
      const response = await fetch(`${harness.gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: hi, ...extra }),
      });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
  });

  it('raises UnprocessableEntityError in the SDK', async () => {
    await expect(
      harness.clientFor(token).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], temperature: 3 }),
    ).rejects.toBeInstanceOf(OpenAI.UnprocessableEntityError);
  });
});

describe('upstream failures', () => {
  it('429 when every credential is rate limited, with the upstream Retry-After', async () => {
    harness.upstream.failNext({ status: 429, headers: { 'retry-after': '7' } });
    const answer = await chat({ model: 'gpt-4o-mini', messages: hi });
    expect(answer.status).toBe(429);
    expect(answer.headers.get('retry-after')).toBe('7');
    expect(answer.body.error).toMatchObject({ code: 'upstream_rate_limited', type: 'rate_limit_error' });
  });

  it('502 when the upstream fails, refuses our credential, or cannot be reached', async () => {
    harness.upstream.failNext({ status: 500 });
    const failed = await chat({ model: 'gpt-4o-mini', messages: hi });
    expect(failed.status).toBe(502);
    expect(failed.body.error.code).toBe('upstream_error');

    resetCredentials(harness.gateway);
    harness.upstream.failNext({ status: 401 });
    const refused = await chat({ model: 'gpt-4o-mini', messages: hi });
    expect(refused.status).toBe(502);
    expect(refused.body.error.code).toBe('upstream_auth_failed');
    // The caller's own token must never be mistaken for the upstream's problem, nor leak it.
    expect(refused.body.error.message).not.toContain(token);

    const unreachable = await chat({ model: 'unreachable-chat', messages: hi });
    expect(unreachable.status).toBe(502);
    expect(unreachable.body.error.code).toBe('upstream_error');
    const row = await harness.logRow(unreachable.headers.get('x-request-id'));
    expect(row).toMatchObject({ status: 502, upstream: 'unreachable', errorCode: 'upstream_error' });

    // None of them names a credential, a URL or the HTTP client's codes; each carries its request id.
    for (const answer of [failed, refused, unreachable]) {
      const { message } = answer.body.error;
      for (const internal of ['primary', 'unreachable', '127.0.0.1', 'ECONNREFUSED', 'HTTP1_', 'sk-upstream']) expect(message).not.toContain(internal);
      expect(message).toContain(`request id ${answer.headers.get('x-request-id')}`);
    }
  });

  it('502 for a stream the upstream refuses before the first chunk', async () => {
    harness.upstream.failNext({ status: 503 });
    const answer = await chat({ model: 'gpt-4o-mini', messages: hi, stream: true });
    expect(answer.status).toBe(502);
    expect(answer.headers.get('content-type')).toContain('application/json');
  });

  it('504 when the upstream does not answer in time', async () => {
    harness.upstream.options = { firstByteDelayMs: 1_500 };
    const answer = await chat({ model: 'slow-chat', messages: hi });
    expect(answer.status).toBe(504);
    expect(answer.body.error.code).toBe('upstream_timeout');
    expect(answer.body.error.message).not.toContain('slow');
  });
});

describe('503 while shutting down', () => {
  it('refuses a request that arrives on a kept-alive connection during shutdown, after the in-flight stream completes', async () => {
    const local = await startOpenAIFakeGateway({ upstream: { chunkDelayMs: 40, splitBytes: false } });
    const localToken = await local.createToken();
    const url = new URL(local.gateway.url);
    const client = new Client(url.origin, { pipelining: 2 });
    const headers = { authorization: `Bearer ${localToken}`, 'content-type': 'application/json' };
    const streaming = client.request({
      path: '/v1/chat/completions',
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: hi, stream: true }),
    });
    const first = await streaming;
    const pipelined = client.request({ path: '/v1/models', method: 'GET', headers });
    const shutdown = local.gateway.shutdown();
    const streamed = await first.body.text();
    expect(first.statusCode).toBe(200);
    expect(streamed.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const refused = await pipelined;
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(((await refused.body.json()) as Answer['body']).error.code).toBe('shutting_down');
    await shutdown;
    await client.close();
    await Promise.all([local.upstream.close(), local.backupUpstream.close()]);
  });
});
