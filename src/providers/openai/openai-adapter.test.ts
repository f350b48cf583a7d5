import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayError } from '../../errors/index.js';
import { testAttempt, testCredential, testEndpoint } from '../../../test/support/attempts.js';
import { OpenAIAdapter } from './openai-adapter.js';

let server: Server;
let answer: unknown;
let adapter: OpenAIAdapter;
/** What the upstream saw of each request: its credential and the connection it came on. */
const seen: Array<{ authorization: string | undefined; organization: string | undefined; port: number | undefined }> = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    seen.push({
      authorization: request.headers.authorization,
      organization: request.headers['openai-organization'] as string | undefined,
      port: request.socket.remotePort,
    });
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'application/json', 'x-ratelimit-remaining-requests': '99', 'x-ratelimit-reset-requests': '1s' });
      response.end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  adapter = new OpenAIAdapter(testEndpoint({ provider: 'openai', base_url: `http://127.0.0.1:${port}/v1`, max_connections: 2 }));
});
afterAll(async () => {
  await adapter.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function embedCode(data: unknown): Promise<string> {
  answer = { object: 'list', data, model: 'm', usage: { prompt_tokens: 1, total_tokens: 1 } };
  try {
    await adapter.embed(testAttempt(), { model: 'm', inputs: ['a', 'b'], encodingFormat: 'float', cancellation: new AbortController().signal });
    return 'accepted';
  } catch (error) {
    return (error as GatewayError).code;
  }
}

describe('OpenAIAdapter.embed', () => {
  it('places vectors by index, in any order', async () => {
    answer = {
      data: [
        { index: 1, embedding: [2] },
        { index: 0, embedding: [1] },
      ],
      usage: { prompt_tokens: 3 },
    };
    const result = await adapter.embed(testAttempt(), { model: 'm', inputs: ['a', 'b'], encodingFormat: 'float', cancellation: new AbortController().signal });
    expect(result).toEqual({ vectors: [[1], [2]], promptTokens: 3 });
  });

  it('refuses an answer with a repeated, missing or out-of-range index', async () => {
    expect(
      await embedCode([
        { index: 0, embedding: [1] },
        { index: 0, embedding: [2] },
      ]),
    ).toBe('upstream_invalid_response');
    expect(await embedCode([{ index: 0, embedding: [1] }])).toBe('upstream_invalid_response');
    expect(
      await embedCode([
        { index: 0, embedding: [1] },
        { index: 2, embedding: [2] },
      ]),
    ).toBe('upstream_invalid_response');
  });
});

describe('OpenAIAdapter credentials', () => {
  const twoVectors = {
    data: [
      { index: 0, embedding: [1] },
      { index: 1, embedding: [2] },
    ],
  };
  const call = () => ({ model: 'm', inputs: ['a', 'b'], encodingFormat: 'float' as const, cancellation: new AbortController().signal });

  it('sends the credential of each call, over one connection pool: a key rotated at run time needs no new adapter', async () => {
    answer = twoVectors;
    seen.length = 0;
    const old = testCredential('key-1', 'sk-old');
    await adapter.embed(testAttempt(old), call());
    await adapter.embed(testAttempt(testCredential('key-2', 'sk-other', { 'openai-organization': 'org-2' })), call());
    // Rotation: the same id with a new secret is a new credential object.
    await adapter.embed(testAttempt({ ...old, apiKey: 'sk-new' }), call());
    expect(seen.map(({ authorization, organization }) => [authorization, organization])).toEqual([
      ['Bearer sk-old', undefined],
      ['Bearer sk-other', 'org-2'],
      ['Bearer sk-new', undefined],
    ]);
    // Sequential calls reuse the one kept-alive connection, whichever credential they carry.
    expect(new Set(seen.map(({ port }) => port)).size).toBe(1);
  });

  it("tells the attempt of the answer's head, a success included, so rate-limit state can be read from it", async () => {
    answer = twoVectors;
    const attempt = testAttempt(testCredential('key-1', 'sk-1'));
    await adapter.embed(attempt, call());
    expect(attempt.statusCode).toBe(200);
    expect(attempt.answerHead?.headers['x-ratelimit-remaining-requests']).toBe('99');
  });

  it('names the credential of the call in its errors', async () => {
    answer = { data: [{ index: 0, embedding: [1] }] };
    const error = await adapter.embed(testAttempt(testCredential('key-7', 'sk-7')), call()).catch((caught: unknown) => caught as GatewayError);
    expect((error as GatewayError).message).toMatch(/^Upstream key-7 returned 1 embeddings for 2 inputs/);
  });
});

describe('OpenAIAdapter and the Responses API', () => {
  let upstream: Server;
  let baseUrl = '';
  /** The status and body `/responses` answers. */
  let reply: { status: number; body: unknown } = { status: 404, body: { detail: 'Not Found' } };

  beforeAll(async () => {
    upstream = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(reply.status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(reply.body));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const address = upstream.address();
    baseUrl = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/v1`;
  });
  afterAll(async () => new Promise<void>((resolve) => upstream.close(() => resolve())));

  const create = async (responses: OpenAIAdapter) =>
    (responses.responses as NonNullable<OpenAIAdapter['responses']>)
      .createResponse(testAttempt(), { body: { model: 'm', input: 'Hi' }, stream: false, cancellation: new AbortController().signal })
      .catch((caught: unknown) => caught as GatewayError);

  it('passes through to OpenAI itself, detects on any other server (auto), and converts when told', () => {
    const kinds = [undefined, 'https://api.openai.com/v1', baseUrl].map(
      (base_url) => new OpenAIAdapter(testEndpoint({ provider: 'openai', ...(base_url === undefined ? {} : { base_url }) })),
    );
    expect(kinds.map((adapter) => adapter.responses !== undefined)).toEqual([true, true, true]);
    const converting = new OpenAIAdapter(testEndpoint({ provider: 'openai', base_url: baseUrl, responses: 'convert' } as Parameters<typeof testEndpoint>[0]));
    expect(converting.responses).toBeUndefined();
    return Promise.all([...kinds, converting].map((adapter) => adapter.close()));
  });

  it('learns from a 404 or 405 at /responses that the server has none, but not from an unknown model, and never when told passthrough', async () => {
    const auto = new OpenAIAdapter(testEndpoint({ provider: 'openai', base_url: baseUrl }));
    const passthrough = new OpenAIAdapter(
      testEndpoint({ provider: 'openai', base_url: baseUrl, responses: 'passthrough' } as Parameters<typeof testEndpoint>[0]),
    );
    try {
      reply = { status: 404, body: { error: { message: 'The model `m` does not exist.', type: 'invalid_request_error', code: 'model_not_found' } } };
      expect(await create(auto)).toMatchObject({ code: 'upstream_bad_request', status: 400 });
      expect(auto.servesResponses()).toBe(true);
      reply = { status: 405, body: { detail: 'Method Not Allowed' } };
      expect(await create(passthrough)).toMatchObject({ code: 'upstream_bad_request' });
      expect(passthrough.servesResponses()).toBe(true);
      expect(await create(auto)).toMatchObject({ code: 'upstream_bad_request', upstream: { class: 'caller', status: 405 } });
      expect(auto.servesResponses()).toBe(false);
    } finally {
      await Promise.all([auto.close(), passthrough.close()]);
    }
  });
});
