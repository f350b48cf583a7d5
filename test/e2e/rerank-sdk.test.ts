import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeRelevance } from '../fake-upstreams/openai-upstream.js';
import { startOpenAIFakeGateway, type OpenAIFakeGateway } from '../support/start-openai-fake-gateway.js';

interface RerankBody {
  model: string;
  results: Array<{ index: number; relevance_score: number; document?: { text: string } }>;
  usage?: { total_tokens: number };
}

let harness: OpenAIFakeGateway;
let token: string;
let client: OpenAI;

const query = 'how do gateways route requests';
const documents = [
  'Bananas are yellow.',
  'A gateway can route requests to many upstreams.',
  'How do trains work?',
  'Gateways route requests: how they do it, in depth.',
  'Nothing relevant here.',
];

beforeAll(async () => {
  harness = await startOpenAIFakeGateway();
  token = await harness.createToken({ team: 'search' });
  client = harness.clientFor(token);
});
afterAll(async () => {
  await harness.close();
});
beforeEach(() => {
  harness.upstream.options = {};
  harness.upstream.requests.length = 0;
});

function rerank(body: Record<string, unknown>): Promise<RerankBody> {
  return client.post('/rerank', { body }) as Promise<RerankBody>;
}

async function post(body: unknown): Promise<{ status: number; body: { error?: { code: string }; detail?: unknown } }> {
  const response = await fetch(`${harness.gateway.url}/v1/rerank`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as never };
}

describe('rerank through the SDK', () => {
  it('sorts by relevance, highest first, with each document original index', async () => {
    const result = await rerank({ model: 'rerank-small', query, documents });
    const expected = documents
      .map((document, index) => ({ index, relevance_score: fakeRelevance(query, document) }))
      .sort((left, right) => right.relevance_score - left.relevance_score || left.index - right.index);
    expect(result.model).toBe('rerank-small');
    expect(result.results).toEqual(expected);
    expect(result.results[0]?.index).toBe(3);
    expect(result.usage?.total_tokens).toBeGreaterThan(0);
    expect(harness.upstream.requests[0]?.path).toBe('/v1/rerank');
    expect(harness.upstream.requests[0]?.body).toEqual({ model: 'BAAI/bge-reranker-v2-m3', query, documents, return_documents: false });
  });

  it('cuts to top_n and returns the documents when asked', async () => {
    const result = await rerank({ model: 'rerank-small', query, documents, top_n: 2, return_documents: true });
    expect(result.results.map((item) => item.index)).toEqual([3, 1]);
    expect(result.results.map((item) => item.document?.text)).toEqual([documents[3], documents[1]]);
    expect(harness.upstream.requests[0]?.body).toMatchObject({ top_n: 2 });
    const all = await rerank({ model: 'rerank-small', query, documents, top_n: 50 });
    expect(all.results).toHaveLength(documents.length);
  });

  it('logs the request with the upstream usage', async () => {
    const { response } = await client.post('/rerank', { body: { model: 'rerank-small', query, documents } }).withResponse();
    const row = await harness.logRow(response.headers.get('x-request-id'));
    expect(row).toMatchObject({ endpoint: 'rerank', model: 'rerank-small', upstream: 'primary', status: 200, usageSource: 'upstream' });
    expect(row.promptTokens).toBeGreaterThan(0);
  });
});

describe('rerank errors', () => {
  const refused: Array<[string, Record<string, unknown>, (string | number)[]]> = [
    ['a missing query', { model: 'rerank-small', documents }, ['body', 'query']],
    ['an empty query', { model: 'rerank-small', query: '', documents }, ['body', 'query']],
    ['missing documents', { model: 'rerank-small', query }, ['body', 'documents']],
    ['no documents', { model: 'rerank-small', query, documents: [] }, ['body', 'documents']],
    ['a document that is not a string', { model: 'rerank-small', query, documents: ['ok', 3] }, ['body', 'documents', 1]],
    ['more than 1000 documents', { model: 'rerank-small', query, documents: Array.from({ length: 1001 }, () => 'd') }, ['body', 'documents']],
    ['top_n of 0', { model: 'rerank-small', query, documents, top_n: 0 }, ['body', 'top_n']],
    ['return_documents not a boolean', { model: 'rerank-small', query, documents, return_documents: 'yes' }, ['body', 'return_documents']],
  ];
  for (const [name, body, loc] of refused) {
    it(`refuses ${name} with 422 naming the field`, async () => {
      const answer = await post(body);
      expect(answer.status).toBe(422);
      expect(answer.body.error?.code).toBe('validation_error');
      expect(answer.body.detail).toContainEqual(expect.objectContaining({ loc }));
      expect(harness.upstream.requests).toHaveLength(0);
    });
  }

  it('accepts exactly 1000 documents', async () => {
    expect((await post({ model: 'rerank-small', query, documents: Array.from({ length: 1000 }, (_, index) => `doc ${index}`) })).status).toBe(200);
  });

  it('refuses an embedding model with 400 naming its type', async () => {
    const answer = await post({ model: 'text-embedding-3-small', query, documents });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe('model_type_mismatch');
    await expect(rerank({ model: 'text-embedding-3-small', query, documents })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });
});
