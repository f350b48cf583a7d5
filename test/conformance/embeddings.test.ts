import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conformanceErrors } from '../support/openai-conformance.js';
import { providersWith, startConformanceGateway, type ConformanceGateway } from './conformance-providers.js';

const INPUTS = Array.from({ length: 7 }, (_, index) => `input number ${index}: ${'word '.repeat(index + 1)}`);

for (const provider of providersWith('embedding')) {
  describe(`embeddings conformance: ${provider.name}`, () => {
    let running: ConformanceGateway;
    beforeAll(async () => {
      running = await startConformanceGateway(provider);
    });
    afterAll(async () => {
      await running.close();
    });

    it('returns one vector per input, at its index, all of one dimension, with usage, in OpenAI shape', async () => {
      const raw = await running.client.embeddings.create({ model: 'embedding', input: INPUTS, encoding_format: 'float' }).asResponse();
      const body = (await raw.json()) as { data: Array<{ index: number; embedding: number[] }>; usage: { prompt_tokens: number; total_tokens: number } };
      expect(conformanceErrors('CreateEmbeddingResponse', body)).toEqual([]);
      expect(body.data.map((item) => item.index)).toEqual(INPUTS.map((_, index) => index));
      const dimension = body.data[0]?.embedding.length ?? 0;
      expect(dimension).toBeGreaterThan(0);
      expect(body.data.every((item) => item.embedding.length === dimension)).toBe(true);
      expect(body.usage.prompt_tokens).toBeGreaterThan(0);
      expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens);
    });

    it('gives the same vectors as base64 (the SDK default) as it gives as floats', async () => {
      const floats = await running.client.embeddings.create({ model: 'embedding', input: INPUTS.slice(0, 3), encoding_format: 'float' });
      const decoded = await running.client.embeddings.create({ model: 'embedding', input: INPUTS.slice(0, 3) });
      decoded.data.forEach((item, index) => {
        const expected = floats.data[index]?.embedding ?? [];
        expect(item.embedding).toHaveLength(expected.length);
        item.embedding.forEach((value, position) => expect(value).toBeCloseTo(expected[position] as number, 5));
      });
    });
  });
}
