import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { stringify } from 'yaml';
import { loadConfig } from '../../src/config/index.js';
import { startGateway, type Gateway } from '../../src/gateway.js';
import { createLogger } from '../../src/observability/logger.js';

export interface TestGateway {
  gateway: Gateway;
  /** The official SDK, authenticated with `token`, no retries. */
  client: OpenAI;
  token: string;
  directory: string;
  configPath: string;
  close(): Promise<void>;
}

/**
 * A real gateway from a real config file: the given upstreams and models (plus any other keys),
 * SQLite in a temporary directory, a free port, logs off, and a token for the SDK.
 */
export async function startTestGateway(document: { upstreams: unknown[]; models: unknown[] } & Record<string, unknown>): Promise<TestGateway> {
  const directory = mkdtempSync(join(tmpdir(), 'switchyard-test-'));
  const configPath = join(directory, 'switchyard.yaml');
  writeFileSync(
    configPath,
    stringify({
      server: { host: '127.0.0.1', port: 0, shutdown_timeout_ms: 5_000 },
      database: { url: `sqlite:${join(directory, 'switchyard.db')}` },
      logging: { level: 'silent' },
      ...document,
    }),
  );
  const gateway = await startGateway(loadConfig({ configPath, env: {} }).config, { logger: createLogger('silent') });
  const { secret } = await gateway.tokens.create({ team: 'test' });
  return {
    gateway,
    client: new OpenAI({ apiKey: secret, baseURL: `${gateway.url}/v1`, maxRetries: 0, timeout: 10_000 }),
    token: secret,
    directory,
    configPath,
    async close() {
      await gateway.shutdown();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
