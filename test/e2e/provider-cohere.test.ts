import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';
import { COHERE_MAX_TEXTS, fakeCohereEmbedding, fakeCohereInputTokens, startFakeCohereUpstream, type FakeCohereUpstream } from '../fake-upstreams/cohere-upstream.js';
import { fakeRelevance } from '../fake-upstreams/openai-upstream.js';
import { resetCredentials } from '../support/reset-credentials.js';

interface RerankList {
  model: string;
  results: Array<{ index: number; relevance_score: number; document?: { text: string } }>;
  usage?: { total_tokens: number };
}

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/cohere/${name}`, import.meta.url), 'utf8')) as unknown;

let upstream: FakeCohereUpstream;
let running: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startFakeCohereUpstream();
  running = await startTestGateway({
    upstreams: [{ id: 'cohere-a', provider: 'cohere', base_url: upstream.url, api_key: 'co-test-key' }],
    models: [
      { id: 'cohere-embed', type: 'embedding', owned_by: 'cohere', routes: [{ upstream: 'cohere-a', model: 'embed-v4.0' }] },
      { id: 'cohere-rerank', type: 'rerank', owned_by: 'cohere', routes: [{ upstream: 'cohere-a', model: 'rerank-v3.5' }] },
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

describe('Cohere embeddings through the openai SDK', () => {
  it('returns float vectors at their inputs indexes, with Cohere billed tokens as usage', async () => {
    const inputs = ['first input', 'b', 'a third, longer input'];
    const result = await client.embeddings.create({ model: 'cohere-embed', input: inputs, encoding_format: 'float' });
    expect(result.model).toBe('cohere-embed');
    expect(result.data.map((item) => item.index)).toEqual([0, 1, 2]);
    result.data.forEach((item, index) => expect(item.embedding).toEqual(fakeCohereEmbedding(inputs[index] as string)));
    expect(result.usage).toEqual({ prompt_tokens: fakeCohereInputTokens(inputs), total_tokens: fakeCohereInputTokens(inputs) });

    const [request] = upstream.requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/v2/embed');
    expect(request?.headers.authorization).toBe('Bearer co-test-key');
    expect(request?.body).toEqual({ model: 'embed-v4.0', texts: inputs, input_type: 'search_document', embedding_types: ['float'] });
  });

  it('serves the SDK default (base64 on the wire to the SDK, floats from Cohere), and sends output_dimension', async () => {
    const result = await client.embeddings.create({ model: 'cohere-embed', input: 'hello world', dimensions: 4 });
    const expected = fakeCohereEmbedding('hello world', 4);
    expect(result.data[0]?.embedding).toHaveLength(4);
    result.data[0]?.embedding.forEach((value, index) => expect(value).toBeCloseTo(expected[index] as number, 6));
    expect(upstream.requests[0]?.body).toMatchObject({ texts: ['hello world'], embedding_types: ['float'], output_dimension: 4 });
  });

  it(`splits more than ${COHERE_MAX_TEXTS} inputs into batches Cohere accepts, every vector at its index`, async () => {
    const inputs = Array.from({ length: COHERE_MAX_TEXTS + 1 }, (_, index) => `${'x'.repeat(index % 7)}input ${index}`);
    const result = await client.embeddings.create({ model: 'cohere-embed', input: inputs, encoding_format: 'float' });
    const sent = upstream.requests.map((request) => (request.body as { texts: string[] }).texts);
    expect(sent.map((texts) => texts.length).sort((left, right) => right - left)).toEqual([COHERE_MAX_TEXTS, 1]);
    expect(sent.flat().sort()).toEqual([...inputs].sort());
    expect(result.data.map((item) => item.index)).toEqual(inputs.map((_, index) => index));
    result.data.forEach((item, index) => expect(item.embedding).toEqual(fakeCohereEmbedding(inputs[index] as string)));
    expect(result.usage.prompt_tokens).toBe(fakeCohereInputTokens(inputs));
  });

  it('refuses token arrays with 400 upstream_bad_request, without calling Cohere', async () => {
    const refused = await client.embeddings.create({ model: 'cohere-embed', input: [[1, 2, 3]] }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('upstream_bad_request');
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('Cohere rerank through the openai SDK', () => {
  const query = 'how do gateways route requests';
  const documents = ['Bananas are yellow.', 'A gateway can route requests to many upstreams.', 'How do trains work?', 'Gateways route requests: how they do it, in depth.'];

  it('sorts by relevance with each document original index, and reports no token usage', async () => {
    const result = (await client.post('/rerank', { body: { model: 'cohere-rerank', query, documents } })) as RerankList;
    const expected = documents
      .map((document, index) => ({ index, relevance_score: fakeRelevance(query, document) }))
      .sort((left, right) => right.relevance_score - left.relevance_score || left.index - right.index);
    expect(result.model).toBe('cohere-rerank');
    expect(result.results).toEqual(expected);
    expect(result.results[0]?.index).toBe(3);
    // Cohere bills rerank in search units, not tokens: the gateway does not invent a token count.
    expect(result.usage).toBeUndefined();
    const [request] = upstream.requests;
    expect(request?.path).toBe('/v2/rerank');
    expect(request?.headers.authorization).toBe('Bearer co-test-key');
    expect(request?.body).toEqual({ model: 'rerank-v3.5', query, documents });
  });

  it('passes top_n to Cohere and returns that many, with the documents when asked', async () => {
    const result = (await client.post('/rerank', { body: { model: 'cohere-rerank', query, documents, top_n: 2, return_documents: true } })) as RerankList;
    expect(result.results.map((item) => item.index)).toEqual([3, 1]);
    expect(result.results.map((item) => item.document?.text)).toEqual([documents[3], documents[1]]);
    expect(upstream.requests[0]?.body).toMatchObject({ top_n: 2 });
  });
});

describe('Cohere errors as the SDK sees them', () => {
  it('429 with the upstream Retry-After', async () => {
    upstream.failNext({ status: 429, body: fixture('errors/429-trial-key-limit.json'), headers: { 'retry-after': '7' } });
    const error = await client.embeddings.create({ model: 'cohere-embed', input: 'x' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    const rateLimited = error as InstanceType<typeof OpenAI.RateLimitError>;
    expect(rateLimited.code).toBe('upstream_rate_limited');
    expect(rateLimited.headers?.get('retry-after')).toBe('7');
  });

  it('401 from Cohere is 502 upstream_auth_failed', async () => {
    upstream.failNext({ status: 401, body: fixture('errors/401-invalid-api-token.json') });
    const error = await client.post('/rerank', { body: { model: 'cohere-rerank', query: 'q', documents: ['d'] } }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_auth_failed');
  });

  it('400 from Cohere is 400 upstream_bad_request with Cohere message', async () => {
    upstream.failNext({ status: 400, body: fixture('errors/400-invalid-request.json') });
    const error = await client.embeddings.create({ model: 'cohere-embed', input: 'x' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('upstream_bad_request');
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('invalid request');
  });
});
