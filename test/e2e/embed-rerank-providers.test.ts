import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeRelevance } from '../fake-upstreams/openai-upstream.js';
import type { JsonFakeServer } from '../fake-upstreams/json-fake-server.js';
import { resetCredentials } from '../support/reset-credentials.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';
import { EMBED_RERANK_PROVIDERS } from './embed-rerank-providers.js';

interface RerankList {
  model: string;
  results: Array<{ index: number; relevance_score: number; document?: { text: string } }>;
  usage?: { total_tokens: number };
}

const query = 'how do gateways route requests';
const documents = [
  'Bananas are yellow.',
  'A gateway can route requests to many upstreams.',
  'How do trains work?',
  'Gateways route requests: how they do it, in depth.',
];

describe.each(EMBED_RERANK_PROVIDERS)('$name', (provider) => {
  let upstream: JsonFakeServer;
  let running: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    upstream = await provider.start();
    running = await startTestGateway(provider.document(upstream.url));
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

  const rerank = (body: Record<string, unknown>) => client.post('/rerank', { body: { model: provider.rerankModel, ...body } }) as Promise<RerankList>;

  describe(`${provider.name} embeddings through the openai SDK`, () => {
    it(`returns float vectors at their inputs indexes, ${provider.embedRequest.title}`, async () => {
      const inputs = ['first input', 'b', 'a third, longer input'];
      const result = await client.embeddings.create({ model: provider.embedModel, input: inputs, encoding_format: 'float' });
      expect(result.model).toBe(provider.embedModel);
      expect(result.data.map((item) => item.index)).toEqual([0, 1, 2]);
      result.data.forEach((item, index) => expect(item.embedding).toEqual(provider.embedding(inputs[index] as string)));
      if (provider.inputTokens === undefined) {
        expect(result.usage.prompt_tokens).toBeGreaterThan(0);
        expect(result.usage.total_tokens).toBe(result.usage.prompt_tokens);
      } else {
        expect(result.usage).toEqual({ prompt_tokens: provider.inputTokens(inputs), total_tokens: provider.inputTokens(inputs) });
      }
      const [request] = upstream.requests;
      expect(request?.method).toBe('POST');
      expect(request?.path).toBe(provider.embedRequest.path);
      expect(request?.headers.authorization).toBe(provider.embedRequest.authorization);
      expect(request?.body).toEqual(provider.embedRequest.body(inputs));
    });

    it(`serves the SDK default (base64 to the SDK, ${provider.dimensions.title}`, async () => {
      const { count, body, exact } = provider.dimensions;
      const result = await client.embeddings.create({ model: provider.embedModel, input: 'hello world', dimensions: count });
      const expected = provider.embedding('hello world', count);
      expect(result.data[0]?.embedding).toHaveLength(count);
      result.data[0]?.embedding.forEach((value, index) => expect(value).toBeCloseTo(expected[index] as number, 6));
      if (exact) expect(upstream.requests[0]?.body).toEqual(body);
      else expect(upstream.requests[0]?.body).toMatchObject(body);
    });

    if (provider.tokenArrays === 'refused') {
      it(`refuses token arrays with 400 upstream_bad_request, without calling ${provider.name}`, async () => {
        const refused = await client.embeddings.create({ model: provider.embedModel, input: [[1, 2, 3]] }).catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
        expect((refused as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('upstream_bad_request');
        expect(upstream.requests).toHaveLength(0);
      });
    } else {
      it(`passes token arrays through, as ${provider.name} accepts token ids`, async () => {
        const result = await client.embeddings.create({
          model: provider.embedModel,
          input: [
            [101, 3231, 102],
            [7, 8],
          ],
          encoding_format: 'float',
        });
        expect(result.data.map((item) => item.embedding)).toEqual([provider.embedding([101, 3231, 102]), provider.embedding([7, 8])]);
        expect(upstream.requests[0]?.body).toMatchObject({
          inputs: [
            [101, 3231, 102],
            [7, 8],
          ],
        });
      });
    }

    it(`splits ${provider.batching.title}, every vector at its index`, async () => {
      const { model, inputs, batches, authorization, inputField } = provider.batching;
      const result = await client.embeddings.create({ model, input: inputs, encoding_format: 'float' });
      const sent = upstream.requests.map((request) => (request.body as Record<string, string[]>)[inputField] as string[]);
      expect(sent).toHaveLength(batches.length);
      expect(sent).toEqual(expect.arrayContaining(batches));
      expect(sent.map((batch) => batch.length).sort((left, right) => right - left)).toEqual(
        batches.map((batch) => batch.length).sort((left, right) => right - left),
      );
      expect(sent.flat().sort()).toEqual([...inputs].sort());
      expect(upstream.requests.every((request) => request.headers.authorization === authorization)).toBe(true);
      expect(result.data.map((item) => item.index)).toEqual(inputs.map((_, index) => index));
      result.data.forEach((item, index) => expect(item.embedding).toEqual(provider.embedding(inputs[index] as string)));
      if (provider.inputTokens !== undefined) expect(result.usage.prompt_tokens).toBe(provider.inputTokens(inputs));
    });
  });

  describe(`${provider.name} rerank through the openai SDK`, () => {
    it(`sorts by relevance with each document original index, ${provider.rerankRequest.title}`, async () => {
      const result = await rerank({ query, documents });
      const expected = documents
        .map((document, index) => ({ index, relevance_score: fakeRelevance(query, document) }))
        .sort((left, right) => right.relevance_score - left.relevance_score || left.index - right.index);
      expect(result.model).toBe(provider.rerankModel);
      expect(result.results).toEqual(expected);
      expect(result.results[0]?.index).toBe(3);
      const usage = provider.rerankRequest.usage(query, documents);
      if (usage === undefined) expect(result.usage).toBeUndefined();
      else expect(result.usage).toEqual(usage);
      const [request] = upstream.requests;
      expect(request?.path).toBe(provider.rerankRequest.path);
      if (provider.rerankRequest.authorization === undefined) expect(request?.headers.authorization).toBeUndefined();
      else expect(request?.headers.authorization).toBe(provider.rerankRequest.authorization);
      expect(request?.body).toEqual(provider.rerankRequest.body(query, documents));
    });

    it(provider.topN.title, async () => {
      const result = await rerank({ query, documents, top_n: 2, return_documents: true });
      expect(result.results.map((item) => item.index)).toEqual([3, 1]);
      expect(result.results.map((item) => item.document?.text)).toEqual([documents[3], documents[1]]);
      if (provider.topN.body === 'absent') expect(upstream.requests[0]?.body).not.toHaveProperty('top_n');
      else expect(upstream.requests[0]?.body).toMatchObject(provider.topN.body);
    });
  });

  describe(`${provider.name} errors as the SDK sees them`, () => {
    it.each(provider.errors)('$title', async ({ cases }) => {
      for (const [index, { failure, call, errorClass, status, code, message, retryAfter }] of cases.entries()) {
        // A refused credential is out of service until an operator resets it.
        if (index > 0) resetCredentials(running.gateway);
        upstream.failNext(failure);
        const asked = call === 'embed' ? client.embeddings.create({ model: provider.embedModel, input: 'x' }) : rerank({ query: 'q', documents: ['d'] });
        const error = await asked.catch((caught: unknown) => caught);
        if (errorClass !== undefined) expect(error).toBeInstanceOf(errorClass);
        const answered = error as InstanceType<typeof OpenAI.APIError>;
        if (status !== undefined) expect(answered.status).toBe(status);
        expect(answered.code).toBe(code);
        if (message !== undefined) expect(answered.message).toContain(message);
        if (retryAfter !== undefined) expect(answered.headers?.get('retry-after')).toBe(retryAfter);
      }
    });
  });
});
