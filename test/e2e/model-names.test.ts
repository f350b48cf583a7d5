import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../../src/store/index.js';
import { startFakeAzureUpstream, type FakeAzureUpstream } from '../fake-upstreams/azure-upstream.js';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

// Callers see the model id they asked for; the upstream's own name for it (an Azure deployment, a
// dated snapshot) goes to the request log only. See docs/model-names.md.
let azure: FakeAzureUpstream;
let openai: FakeOpenAIUpstream;
let running: TestGateway;

beforeAll(async () => {
  azure = await startFakeAzureUpstream();
  openai = await startFakeOpenAIUpstream();
  running = await startTestGateway({
    request_log: { flush_interval_ms: 20 },
    upstreams: [
      { id: 'azure-east', provider: 'azure', base_url: azure.url, api_key: 'azure-key' },
      { id: 'compatible', provider: 'openai', base_url: openai.url, api_key: 'sk-compatible' },
    ],
    models: [
      { id: 'gpt-4o', type: 'chat', routes: [{ upstream: 'azure-east', model: 'gpt4o-prod-deployment' }] },
      // The fake answers with its recorded snapshot name, gpt-4o-mini-2024-07-18, whatever it was asked.
      { id: 'fast-chat', type: 'chat', routes: [{ upstream: 'compatible', model: 'vendor/fast-model' }] },
    ],
  });
});

afterAll(async () => {
  await running?.close();
  await azure?.close();
  await openai?.close();
});

async function logRow(requestId: string | null): Promise<RequestLogEntry> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const [row] = requestId === null ? [] : await running.gateway.stores.requestLogs.query({ requestId, limit: 1 });
    if (row !== undefined) return row;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no request log row for ${String(requestId)}`);
}

describe('the model name callers see', () => {
  for (const [model, upstreamModel] of [
    ['gpt-4o', 'gpt4o-prod-deployment'],
    ['fast-chat', 'vendor/fast-model'],
  ] as const) {
    it(`${model}: a chat completion names the public id, the request log the upstream's name`, async () => {
      const { data, response } = await running.client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
      expect(data.model).toBe(model);
      expect(data.choices[0]?.message.content).toBe('Hello! How can I assist you today?');
      expect(await logRow(response.headers.get('x-request-id'))).toMatchObject({ model, upstreamModel });
    });

    it(`${model}: every streamed chunk names the public id`, async () => {
      const { data: stream, response } = await running.client.chat.completions
        .create({ model, messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } })
        .withResponse();
      const models = new Set<string>();
      let text = '';
      let chunks = 0;
      for await (const chunk of stream) {
        chunks++;
        models.add(chunk.model);
        text += chunk.choices[0]?.delta.content ?? '';
      }
      expect(chunks).toBeGreaterThan(2);
      expect([...models]).toEqual([model]);
      expect(text).toBe('Hello! How can I assist you today?');
      expect(await logRow(response.headers.get('x-request-id'))).toMatchObject({ model, upstreamModel });
    });
  }

  it('a Response passed through names the public id, in JSON and in every event that carries the response', async () => {
    const { data, response } = await running.client.responses.create({ model: 'fast-chat', input: 'Say OK' }).withResponse();
    expect(data.model).toBe('fast-chat');
    expect(data.output_text).toBe('OK');
    expect(await logRow(response.headers.get('x-request-id'))).toMatchObject({ model: 'fast-chat', upstreamModel: 'vendor/fast-model' });

    const stream = await running.client.responses.create({ model: 'fast-chat', input: 'Say OK', stream: true });
    const models: string[] = [];
    let text = '';
    for await (const event of stream) {
      if ('response' in event) models.push(event.response.model);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    expect(models).toEqual(['fast-chat', 'fast-chat', 'fast-chat']);
    expect(text).toBe('OK');
  });
});
