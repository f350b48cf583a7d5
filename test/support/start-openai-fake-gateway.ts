import { startFakeOpenAIUpstream, type FakeOpenAIOptions, type FakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';
import { startTestGateway, type TestGateway } from './start-test-gateway.js';

export interface OpenAIFakeGateway extends TestGateway {
  upstream: FakeOpenAIUpstream;
  /** A second upstream, for failover tests. */
  backupUpstream: FakeOpenAIUpstream;
}

export interface OpenAIFakeGatewayOptions {
  upstream?: FakeOpenAIOptions;
  databaseUrl?: string;
  /** Extra YAML keys merged over the default document. */
  config?: Record<string, unknown>;
  /** Collects the log lines (level info and above), parsed; logs are off without it. */
  logLines?: Array<Record<string, unknown>>;
}

/**
 * `startTestGateway` in front of two fake OpenAI-compatible upstreams, with a model of every type
 * routed to them (and a slow, a batching and an unreachable route), the request log flushed often.
 */
export async function startOpenAIFakeGateway(options: OpenAIFakeGatewayOptions = {}): Promise<OpenAIFakeGateway> {
  const upstream = await startFakeOpenAIUpstream(options.upstream);
  const backupUpstream = await startFakeOpenAIUpstream(options.upstream);
  const document = {
    request_log: { flush_interval_ms: 50 },
    upstreams: [
      { id: 'primary', provider: 'openai', base_url: upstream.url, api_key: '${FAKE_UPSTREAM_KEY:-sk-upstream-primary}' },
      { id: 'backup', provider: 'openai', base_url: backupUpstream.url, api_key: 'sk-upstream-backup' },
      // The primary fake again, with a first-byte timeout short enough to test 504s.
      { id: 'slow', provider: 'openai', base_url: upstream.url, api_key: 'sk-upstream-slow', timeouts: { first_byte_ms: 300 } },
      // The primary fake again, taking at most two inputs per embeddings call, to test batching.
      { id: 'batched', provider: 'openai', base_url: upstream.url, api_key: 'sk-upstream-batched', max_embedding_inputs: 2 },
      // Port 9 (discard) on loopback: nothing listens there, so connections are refused.
      { id: 'unreachable', provider: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-unreachable', timeouts: { connect_ms: 1_000 } },
    ],
    models: [
      { id: 'gpt-4o-mini', type: 'chat', owned_by: 'openai', created: 1_721_172_741, routes: [{ upstream: 'primary', model: 'gpt-4o-mini-2024-07-18' }] },
      {
        id: 'pooled-chat',
        type: 'chat',
        // The primary first, the backup only while it is unavailable.
        strategy: 'ordered',
        routes: [
          { upstream: 'primary', model: 'pooled-upstream-model', priority: 0 },
          { upstream: 'backup', model: 'pooled-upstream-model', priority: 1 },
        ],
      },
      { id: 'slow-chat', type: 'chat', routes: [{ upstream: 'slow', model: 'slow-model' }] },
      { id: 'unreachable-chat', type: 'chat', routes: [{ upstream: 'unreachable', model: 'any' }] },
      { id: 'text-embedding-3-small', type: 'embedding', owned_by: 'openai', routes: [{ upstream: 'primary', model: 'text-embedding-3-small' }] },
      { id: 'batched-embed', type: 'embedding', routes: [{ upstream: 'batched', model: 'upstream-embedder' }] },
      { id: 'whisper-1', type: 'transcription', owned_by: 'openai', routes: [{ upstream: 'primary', model: 'gpt-4o-transcribe' }] },
      { id: 'tts-1', type: 'speech', owned_by: 'openai', default_voice: 'nova', routes: [{ upstream: 'primary', model: 'gpt-4o-mini-tts' }] },
      { id: 'rerank-small', type: 'rerank', owned_by: 'baai', routes: [{ upstream: 'primary', model: 'BAAI/bge-reranker-v2-m3' }] },
    ],
    ...options.config,
  };
  const started = await startTestGateway(document, {
    ...(options.databaseUrl === undefined ? {} : { databaseUrl: options.databaseUrl }),
    ...(options.logLines === undefined ? {} : { logLines: options.logLines }),
    afterClose: async () => {
      await Promise.all([upstream.close(), backupUpstream.close()]);
    },
  });
  return { ...started, upstream, backupUpstream };
}
