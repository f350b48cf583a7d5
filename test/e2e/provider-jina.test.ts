import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';
import { fakeJinaEmbedding, fakeJinaTokens, startFakeJinaUpstream, type FakeJinaUpstream } from '../fake-upstreams/jina-upstream.js';
import { fakeRelevance } from '../fake-upstreams/openai-upstream.js';
import { resetCredentials } from '../support/reset-credentials.js';

interface RerankList {
  model: string;
  results: Array<{ index: number; relevance_score: number; document?: { text: string } }>;
  usage?: { total_tokens: number };
}

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/jina/${name}`, import.meta.url), 'utf8')) as unknown;

let upstream: FakeJinaUpstream;
let running: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startFakeJinaUpstream();
  running = await startTestGateway({
    upstreams: [
      { id: 'jina-a', provider: 'jina', base_url: upstream.url, api_key: 'jina_test_key' },
      // The same fake, taking at most two inputs per call, to prove batching.
      { id: 'jina-small', provider: 'jina', base_url: upstream.url, api_key: 'jina_small_key', max_embedding_inputs: 2 },
    ],
    models: [
      { id: 'jina-embed', type: 'embedding', owned_by: 'jina', routes: [{ upstream: 'jina-a', model: 'jina-embeddings-v3' }] },
      { id: 'jina-embed-small', type: 'embedding', routes: [{ upstream: 'jina-small', model: 'jina-embeddings-v3' }] },
      { id: 'jina-rerank', type: 'rerank', owned_by: 'jina', routes: [{ upstream: 'jina-a', model: 'jina-reranker-v2-base-multilingual' }] },
    ],
  });
  client = running.client;
});

afterAll(async () => {
  await running?.close();
  await upstream?.close();
});

beforeEach(() => {
  resetCredentials(running.gateway);
  upstream.requests.length = 0;
});

describe('Jina embeddings through the openai SDK', () => {
  it('returns float vectors at their inputs indexes, with Jina prompt tokens as usage', async () => {
    const inputs = ['first input', 'b', 'a third, longer input'];
    const result = await client.embeddings.create({ model: 'jina-embed', input: inputs, encoding_format: 'float' });
    expect(result.model).toBe('jina-embed');
    expect(result.data.map((item) => item.index)).toEqual([0, 1, 2]);
    result.data.forEach((item, index) => expect(item.embedding).toEqual(fakeJinaEmbedding(inputs[index] as string)));
    expect(result.usage).toEqual({ prompt_tokens: fakeJinaTokens(inputs), total_tokens: fakeJinaTokens(inputs) });

    const [request] = upstream.requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/v1/embeddings');
    expect(request?.headers.authorization).toBe('Bearer jina_test_key');
    expect(request?.body).toEqual({ model: 'jina-embeddings-v3', input: inputs, embedding_type: 'float' });
  });

  it('serves the SDK default (base64 to the SDK, floats from Jina), and passes dimensions', async () => {
    const result = await client.embeddings.create({ model: 'jina-embed', input: 'hello world', dimensions: 3 });
    const expected = fakeJinaEmbedding('hello world', 3);
    expect(result.data[0]?.embedding).toHaveLength(3);
    result.data[0]?.embedding.forEach((value, index) => expect(value).toBeCloseTo(expected[index] as number, 6));
    expect(upstream.requests[0]?.body).toMatchObject({ input: ['hello world'], dimensions: 3, embedding_type: 'float' });
  });

  it('splits more inputs than max_embedding_inputs into batches, every vector at its index', async () => {
    const inputs = ['a', 'bb', 'ccc', 'dddd', 'eeeee'];
    const result = await client.embeddings.create({ model: 'jina-embed-small', input: inputs, encoding_format: 'float' });
    const sent = upstream.requests.map((request) => (request.body as { input: string[] }).input);
    expect(sent).toHaveLength(3);
    expect(sent).toEqual(expect.arrayContaining([['a', 'bb'], ['ccc', 'dddd'], ['eeeee']]));
    expect(upstream.requests.every((request) => request.headers.authorization === 'Bearer jina_small_key')).toBe(true);
    expect(result.data.map((item) => item.index)).toEqual([0, 1, 2, 3, 4]);
    result.data.forEach((item, index) => expect(item.embedding).toEqual(fakeJinaEmbedding(inputs[index] as string)));
    expect(result.usage.prompt_tokens).toBe(fakeJinaTokens(inputs));
  });

  it('refuses token arrays with 400 upstream_bad_request, without calling Jina', async () => {
    const refused = await client.embeddings.create({ model: 'jina-embed', input: [[1, 2, 3]] }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('upstream_bad_request');
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('Jina rerank through the openai SDK', () => {
  const query = 'how do gateways route requests';
  const documents = ['Bananas are yellow.', 'A gateway can route requests to many upstreams.', 'How do trains work?', 'Gateways route requests: how they do it, in depth.'];

  it('sorts by relevance with each document original index, with Jina token usage', async () => {
    const result = (await client.post('/rerank', { body: { model: 'jina-rerank', query, documents } })) as RerankList;
    const expected = documents
      .map((document, index) => ({ index, relevance_score: fakeRelevance(query, document) }))
      .sort((left, right) => right.relevance_score - left.relevance_score || left.index - right.index);
    expect(result.model).toBe('jina-rerank');
    expect(result.results).toEqual(expected);
    expect(result.usage).toEqual({ total_tokens: fakeJinaTokens([query, ...documents]) });
    const [request] = upstream.requests;
    expect(request?.path).toBe('/v1/rerank');
    expect(request?.headers.authorization).toBe('Bearer jina_test_key');
    expect(request?.body).toEqual({ model: 'jina-reranker-v2-base-multilingual', query, documents, return_documents: false });
  });

  it('passes top_n to Jina and returns that many, with the documents the gateway attaches', async () => {
    const result = (await client.post('/rerank', { body: { model: 'jina-rerank', query, documents, top_n: 2, return_documents: true } })) as RerankList;
    expect(result.results.map((item) => item.index)).toEqual([3, 1]);
    expect(result.results.map((item) => item.document?.text)).toEqual([documents[3], documents[1]]);
    expect(upstream.requests[0]?.body).toMatchObject({ top_n: 2, return_documents: false });
  });
});

describe('Jina errors as the SDK sees them', () => {
  it('429 with the upstream Retry-After', async () => {
    upstream.failNext({ status: 429, body: { detail: 'Rate limit exceeded' }, headers: { 'retry-after': '9' } });
    const error = await client.post('/rerank', { body: { model: 'jina-rerank', query: 'q', documents: ['d'] } }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('upstream_rate_limited');
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after')).toBe('9');
  });

  it('401 and an empty balance (403) from Jina are 502 upstream_auth_failed', async () => {
    upstream.failNext({ status: 401, body: fixture('errors/401-invalid-api-key.json') });
    const unauthorized = await client.embeddings.create({ model: 'jina-embed', input: 'x' }).catch((caught: unknown) => caught);
    expect((unauthorized as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((unauthorized as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_auth_failed');
    // The refused credential is out of service until an operator resets it.
    resetCredentials(running.gateway);
    upstream.failNext({ status: 403, body: fixture('errors/403-insufficient-balance.json') });
    const broke = await client.embeddings.create({ model: 'jina-embed', input: 'x' }).catch((caught: unknown) => caught);
    expect((broke as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_auth_failed');
  });

  it('422 from Jina is 400 upstream_bad_request naming the field', async () => {
    upstream.failNext({ status: 422, body: fixture('errors/422-validation.json') });
    const error = await client.embeddings.create({ model: 'jina-embed', input: 'x' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('upstream_bad_request');
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('body.input: Field required');
  });
});
