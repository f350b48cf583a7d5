import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { stringify } from 'yaml';
import type { CreateTokenInput } from '../../src/access/index.js';
import type { RequestLogEntry } from '../../src/store/index.js';
import { loadConfig } from '../../src/config/index.js';
import { startGateway, type Gateway } from '../../src/gateway.js';
import { createLogger } from '../../src/observability/logger.js';
import { startFakeOpenAIUpstream, type FakeOpenAIOptions, type FakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';

export interface Harness {
  gateway: Gateway;
  upstream: FakeOpenAIUpstream;
  /** A second upstream, for failover tests. */
  backupUpstream: FakeOpenAIUpstream;
  directory: string;
  configPath: string;
  createToken(input?: Partial<CreateTokenInput>): Promise<string>;
  client(token: string): OpenAI;
  /** The request log row of a response, once the batch writer has written it. */
  logRow(requestId: string | null): Promise<RequestLogEntry>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  upstream?: FakeOpenAIOptions;
  databaseUrl?: string;
  /** Extra YAML keys merged over the default document. */
  config?: Record<string, unknown>;
}

/**
 * A real gateway (config file, database, HTTP server on a free port) in front of two fake
 * OpenAI-compatible upstreams, with the official SDK as the client.
 */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const upstream = await startFakeOpenAIUpstream(options.upstream);
  const backupUpstream = await startFakeOpenAIUpstream(options.upstream);
  const directory = mkdtempSync(join(tmpdir(), 'switchyard-test-'));
  const configPath = join(directory, 'switchyard.yaml');
  const document = {
    server: { host: '127.0.0.1', port: 0, shutdown_timeout_ms: 5_000 },
    database: { url: options.databaseUrl ?? `sqlite:${join(directory, 'switchyard.db')}` },
    logging: { level: 'silent' },
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
  writeFileSync(configPath, stringify(document));
  const { config } = loadConfig({ configPath, env: {} });
  const gateway = await startGateway(config, { logger: createLogger('silent') });
  return {
    gateway,
    upstream,
    backupUpstream,
    directory,
    configPath,
    async createToken(input = {}) {
      const { project } = input;
      if (project !== undefined && project !== null) {
        // A token's project must exist in its team: made here (the store answers false when it is already).
        const team = input.team ?? 'platform';
        await gateway.stores.teams.insertTeam({ id: team, name: team, limits: {}, createdAt: Date.now(), updatedAt: Date.now() });
        await gateway.stores.teams.insertProject({ team, id: project, name: project, limits: {}, createdAt: Date.now(), updatedAt: Date.now() });
      }
      const { secret } = await gateway.tokens.create({ team: 'platform', ...input });
      return secret;
    },
    client(token) {
      return new OpenAI({ apiKey: token, baseURL: `${gateway.url}/v1`, maxRetries: 0, timeout: 10_000 });
    },
    async logRow(requestId) {
      for (let attempt = 0; attempt < 100; attempt++) {
        const [row] = requestId === null ? [] : await gateway.stores.requestLogs.query({ requestId, limit: 1 });
        if (row !== undefined) return row;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`no request log row for ${String(requestId)}`);
    },
    async close() {
      await gateway.shutdown();
      await Promise.all([upstream.close(), backupUpstream.close()]);
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
