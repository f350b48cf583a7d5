import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conformanceErrors } from '../support/openai-conformance.js';
import { providersWith, startConformanceGateway, type ConformanceGateway } from './conformance-providers.js';

for (const provider of providersWith('chat')) {
  describe(`chat conformance: ${provider.name}`, () => {
    let running: ConformanceGateway;
    beforeAll(async () => {
      running = await startConformanceGateway(provider);
    });
    afterAll(async () => {
      await running.close();
    });

    it('answers a chat.completion that matches OpenAI schema, with consistent usage', async () => {
      const raw = await running.client.chat.completions
        .create({
          model: 'chat',
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'Hi' },
          ],
        })
        .asResponse();
      const body = (await raw.json()) as {
        choices: Array<{ message: { role: string; content: string | null }; finish_reason: string }>;
        usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
      };
      expect(conformanceErrors('CreateChatCompletionResponse', body)).toEqual([]);
      expect(body.choices[0]?.message.role).toBe('assistant');
      expect(body.choices[0]?.message.content?.length).toBeGreaterThan(0);
      expect(['stop', 'length', 'tool_calls', 'content_filter']).toContain(body.choices[0]?.finish_reason);
      expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);
    });

    it('streams chunks that match OpenAI schema, with one finish_reason and usage at the end when asked', async () => {
      const stream = await running.client.chat.completions.create({
        model: 'chat',
        messages: [{ role: 'user', content: 'Hi' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      const finishReasons: string[] = [];
      let usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | undefined;
      for await (const chunk of stream) {
        expect(conformanceErrors('CreateChatCompletionStreamResponse', chunk)).toEqual([]);
        text += chunk.choices[0]?.delta.content ?? '';
        if (chunk.choices[0]?.finish_reason) finishReasons.push(chunk.choices[0].finish_reason);
        if (chunk.usage) usage = chunk.usage;
      }
      expect(text.length).toBeGreaterThan(0);
      expect(finishReasons).toHaveLength(1);
      expect(usage?.total_tokens).toBe((usage?.prompt_tokens ?? 0) + (usage?.completion_tokens ?? 0));
    });
  });
}
