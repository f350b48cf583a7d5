import type OpenAI from 'openai';
import type { ModelType } from '../../src/config/index.js';
import { startFakeAnthropicUpstream } from '../fake-upstreams/anthropic-upstream.js';
import { startFakeAzureUpstream } from '../fake-upstreams/azure-upstream.js';
import { startFakeCohereUpstream } from '../fake-upstreams/cohere-upstream.js';
import { startFakeGeminiUpstream } from '../fake-upstreams/gemini-upstream.js';
import { startFakeJinaUpstream } from '../fake-upstreams/jina-upstream.js';
import { startFakeTeiUpstream } from '../fake-upstreams/tei-upstream.js';
import { startTestGateway } from '../support/start-test-gateway.js';
import { startFakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';

/** A provider's fake upstream, as the gateway config needs it. */
export interface RunningFake {
  /** The `upstreams[]` entry (without `id`) pointing at the fake. */
  upstream: Record<string, unknown>;
  close(): Promise<void>;
}

export interface ConformanceProvider {
  name: string;
  /** The upstream model (or deployment) name to route each capability to. */
  models: Partial<Record<ModelType, string>>;
  start(): Promise<RunningFake>;
}

const GEMINI_KEY = 'AIza-fake-gemini-key';

/** Every provider, with the capabilities its fake serves. Each capability suite runs against all that have it. */
export const CONFORMANCE_PROVIDERS: ConformanceProvider[] = [
  {
    name: 'openai',
    models: { chat: 'gpt-4o-mini', embedding: 'text-embedding-3-small', rerank: 'bge-reranker', speech: 'tts-1', transcription: 'whisper-1' },
    async start() {
      const fake = await startFakeOpenAIUpstream({ splitBytes: true });
      return { upstream: { provider: 'openai', base_url: fake.url, api_key: 'sk-conformance' }, close: () => fake.close() };
    },
  },
  {
    name: 'azure',
    models: { chat: 'gpt4o-deploy', embedding: 'embed-deploy', speech: 'tts-deploy', transcription: 'whisper-deploy' },
    async start() {
      const fake = await startFakeAzureUpstream();
      return { upstream: { provider: 'azure', base_url: fake.url, api_key: 'azure-conformance' }, close: () => fake.close() };
    },
  },
  {
    name: 'anthropic',
    models: { chat: 'claude-sonnet-4-5' },
    async start() {
      const fake = await startFakeAnthropicUpstream({ apiKey: 'sk-ant-conformance' });
      return { upstream: { provider: 'anthropic', base_url: fake.url, api_key: 'sk-ant-conformance' }, close: () => fake.close() };
    },
  },
  {
    name: 'gemini',
    models: { chat: 'gemini-2.5-flash', embedding: 'gemini-embedding-001' },
    async start() {
      const fake = await startFakeGeminiUpstream();
      return { upstream: { provider: 'gemini', base_url: fake.url, api_key: GEMINI_KEY }, close: () => fake.close() };
    },
  },
  {
    name: 'cohere',
    models: { embedding: 'embed-v4.0', rerank: 'rerank-v3.5' },
    async start() {
      const fake = await startFakeCohereUpstream();
      return { upstream: { provider: 'cohere', base_url: fake.url, api_key: 'co-conformance' }, close: () => fake.close() };
    },
  },
  {
    name: 'jina',
    models: { embedding: 'jina-embeddings-v3', rerank: 'jina-reranker-v2-base-multilingual' },
    async start() {
      const fake = await startFakeJinaUpstream();
      return { upstream: { provider: 'jina', base_url: fake.url, api_key: 'jina_conformance' }, close: () => fake.close() };
    },
  },
  {
    name: 'tei',
    models: { embedding: 'BAAI/bge-small-en-v1.5', rerank: 'BAAI/bge-reranker-base' },
    async start() {
      const fake = await startFakeTeiUpstream();
      return { upstream: { provider: 'tei', base_url: fake.url }, close: () => fake.close() };
    },
  },
];

export interface ConformanceGateway {
  client: OpenAI;
  close(): Promise<void>;
}

/** A real gateway in front of one provider's fake, with one public model per capability, named after it. */
export async function startConformanceGateway(provider: ConformanceProvider): Promise<ConformanceGateway> {
  const fake = await provider.start();
  const running = await startTestGateway({
    upstreams: [{ id: 'under-test', ...fake.upstream }],
    models: Object.entries(provider.models).map(([type, model]) => ({ id: type, type, routes: [{ upstream: 'under-test', model }] })),
  });
  return {
    client: running.client,
    async close() {
      await running.close();
      await fake.close();
    },
  };
}

export function providersWith(capability: ModelType): ConformanceProvider[] {
  return CONFORMANCE_PROVIDERS.filter((provider) => provider.models[capability] !== undefined);
}
