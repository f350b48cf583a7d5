import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providersWith, startConformanceGateway, type ConformanceGateway } from './conformance-providers.js';

const DOCUMENTS = ['Paris is the capital of France.', 'Bananas are yellow.', 'The capital of Germany is Berlin.', 'France borders Spain.', 'Cats sleep a lot.'];

interface RerankBody {
  model: string;
  results: Array<{ index: number; relevance_score: number; document?: { text: string } }>;
}

for (const provider of providersWith('rerank')) {
  describe(`rerank conformance: ${provider.name}`, () => {
    let running: ConformanceGateway;
    beforeAll(async () => {
      running = await startConformanceGateway(provider);
    });
    afterAll(async () => {
      await running.close();
    });

    it('ranks every document once, by relevance, highest first', async () => {
      const body = (await running.client.post('/rerank', {
        body: { model: 'rerank', query: 'What is the capital of France?', documents: DOCUMENTS },
      })) as RerankBody;
      expect(body.model).toBe('rerank');
      expect([...body.results.map((result) => result.index)].sort()).toEqual(DOCUMENTS.map((_, index) => index));
      const scores = body.results.map((result) => result.relevance_score);
      expect(scores).toEqual([...scores].sort((left, right) => right - left));
    });

    it('keeps top_n and returns the right document text with each index', async () => {
      const body = (await running.client.post('/rerank', {
        body: { model: 'rerank', query: 'capital', documents: DOCUMENTS, top_n: 2, return_documents: true },
      })) as RerankBody;
      expect(body.results).toHaveLength(2);
      for (const result of body.results) expect(result.document?.text).toBe(DOCUMENTS[result.index]);
    });
  });
}
