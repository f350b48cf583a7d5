import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';
import { fakeRelevance } from '../fake-upstreams/openai-upstream.js';
import { fakeTeiEmbedding, startFakeTeiUpstream, TEI_MAX_CLIENT_BATCH_SIZE, type FakeTeiUpstream } from '../fake-upstreams/tei-upstream.js';
import { resetCredentials } from '../support/reset-credentials.js';

interface RerankList {
  model: string;
  results: Array<{ index: number; relevance_score: number; document?: { text: string } }>;
  usage?: { total_tokens: number };
}

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/tei/${name}`, import.meta.url), 'utf8')) as unknown;

let upstream: FakeTeiUpstream;
let running: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startFakeTeiUpstream();
  running = await startTestGateway({
    upstreams: [
      // One TEI process per model: an embedder and a reranker; only the first was started with --api-key.
      { id: 'tei-embed', provider: 'tei', base_url: upstream.url, api_key: 'tei-secret' },
      { id: 'tei-rerank', provider: 'tei', base_url: upstream.url },
    ],
    models: [
      { id: 'bge-small', type: 'embedding', owned_by: 'baai', routes: [{ upstream: 'tei-embed', model: 'BAAI/bge-small-en-v1.5' }] },
      { id: 'bge-reranker', type: 'rerank', owned_by: 'baai', routes: [{ upstream: 'tei-rerank', model: 'BAAI/bge-reranker-base' }] },
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

describe('TEI embeddings through the openai SDK', () => {
  it('returns float vectors at their inputs indexes, with usage counted by the gateway', async () => {
    const inputs = ['first input', 'b', 'a third, longer input'];
    const result = await client.embeddings.create({ model: 'bge-small', input: inputs, encoding_format: 'float' });
    expect(result.model).toBe('bge-small');
    expect(result.data.map((item) => item.index)).toEqual([0, 1, 2]);
    result.data.forEach((item, index) => expect(item.embedding).toEqual(fakeTeiEmbedding(inputs[index] as string)));
    // TEI reports no usage: the gateway counts the tokens itself, and the response still carries them.
    expect(result.usage.prompt_tokens).toBeGreaterThan(0);
    expect(result.usage.total_tokens).toBe(result.usage.prompt_tokens);

    const [request] = upstream.requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/embed');
    expect(request?.headers.authorization).toBe('Bearer tei-secret');
    expect(request?.body).toEqual({ inputs, normalize: true });
  });

  it('serves the SDK default (base64 to the SDK, floats from TEI), and passes dimensions', async () => {
    const result = await client.embeddings.create({ model: 'bge-small', input: 'hello world', dimensions: 5 });
    const expected = fakeTeiEmbedding('hello world', 5);
    expect(result.data[0]?.embedding).toHaveLength(5);
    result.data[0]?.embedding.forEach((value, index) => expect(value).toBeCloseTo(expected[index] as number, 6));
    expect(upstream.requests[0]?.body).toEqual({ inputs: ['hello world'], normalize: true, dimensions: 5 });
  });

  it('passes token arrays through, as TEI accepts token ids', async () => {
    const result = await client.embeddings.create({ model: 'bge-small', input: [[101, 3231, 102], [7, 8]], encoding_format: 'float' });
    expect(result.data.map((item) => item.embedding)).toEqual([fakeTeiEmbedding([101, 3231, 102]), fakeTeiEmbedding([7, 8])]);
    expect(upstream.requests[0]?.body).toMatchObject({ inputs: [[101, 3231, 102], [7, 8]] });
  });

  it(`splits more than ${TEI_MAX_CLIENT_BATCH_SIZE} inputs into batches TEI accepts, every vector at its index`, async () => {
    const inputs = Array.from({ length: TEI_MAX_CLIENT_BATCH_SIZE + 1 }, (_, index) => `${'y'.repeat(index % 5)}input ${index}`);
    const result = await client.embeddings.create({ model: 'bge-small', input: inputs, encoding_format: 'float' });
    const sent = upstream.requests.map((request) => (request.body as { inputs: string[] }).inputs);
    expect(sent.map((batch) => batch.length).sort((left, right) => right - left)).toEqual([TEI_MAX_CLIENT_BATCH_SIZE, 1]);
    expect(result.data.map((item) => item.index)).toEqual(inputs.map((_, index) => index));
    result.data.forEach((item, index) => expect(item.embedding).toEqual(fakeTeiEmbedding(inputs[index] as string)));
  });
});

describe('TEI rerank through the openai SDK', () => {
  const query = 'how do gateways route requests';
  const documents = ['Bananas are yellow.', 'A gateway can route requests to many upstreams.', 'How do trains work?', 'Gateways route requests: how they do it, in depth.'];

  it('sorts by relevance with each document original index; no usage, no auth header without api_key', async () => {
    const result = (await client.post('/rerank', { body: { model: 'bge-reranker', query, documents } })) as RerankList;
    const expected = documents
      .map((document, index) => ({ index, relevance_score: fakeRelevance(query, document) }))
      .sort((left, right) => right.relevance_score - left.relevance_score || left.index - right.index);
    expect(result.model).toBe('bge-reranker');
    expect(result.results).toEqual(expected);
    expect(result.usage).toBeUndefined();
    const [request] = upstream.requests;
    expect(request?.path).toBe('/rerank');
    expect(request?.headers.authorization).toBeUndefined();
    expect(request?.body).toEqual({ query, texts: documents, return_text: false, raw_scores: false });
  });

  it('cuts to top_n itself (TEI has none), with the documents when asked', async () => {
    const result = (await client.post('/rerank', { body: { model: 'bge-reranker', query, documents, top_n: 2, return_documents: true } })) as RerankList;
    expect(result.results.map((item) => item.index)).toEqual([3, 1]);
    expect(result.results.map((item) => item.document?.text)).toEqual([documents[3], documents[1]]);
    expect(upstream.requests[0]?.body).not.toHaveProperty('top_n');
  });
});

describe('TEI errors as the SDK sees them', () => {
  it('429 (overloaded) with the upstream Retry-After', async () => {
    upstream.failNext({ status: 429, body: fixture('errors/429-overloaded.json'), headers: { 'retry-after': '2' } });
    const error = await client.embeddings.create({ model: 'bge-small', input: 'x' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('upstream_rate_limited');
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after')).toBe('2');
  });

  it('401 from a TEI started with --api-key is 502 upstream_auth_failed', async () => {
    upstream.failNext({ status: 401, body: '' });
    const error = await client.embeddings.create({ model: 'bge-small', input: 'x' }).catch((caught: unknown) => caught);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_auth_failed');
  });

  it('413 (batch too large) is 400 upstream_bad_request with TEI message; 424 is 502', async () => {
    upstream.failNext({ status: 413, body: fixture('errors/413-batch-size.json') });
    const tooMany = await client.embeddings.create({ model: 'bge-small', input: 'x' }).catch((caught: unknown) => caught);
    expect(tooMany).toBeInstanceOf(OpenAI.BadRequestError);
    expect((tooMany as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('upstream_bad_request');
    expect((tooMany as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('maximum allowed batch size');
    upstream.failNext({ status: 424, body: fixture('errors/424-inference-failed.json') });
    const failed = await client.post('/rerank', { body: { model: 'bge-reranker', query: 'q', documents: ['d'] } }).catch((caught: unknown) => caught);
    expect((failed as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((failed as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_error');
  });
});
