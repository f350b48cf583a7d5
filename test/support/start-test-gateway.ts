import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
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

export interface TestGatewayOptions {
  /** The environment the config is loaded with (`${VAR}`, proxy variables); empty by default. */
  env?: NodeJS.ProcessEnv;
  /** Collects the log lines (level info and above), parsed; logs are off without it. */
  logLines?: Array<Record<string, unknown>>;
}

/**
 * A real gateway from a real config file: the given upstreams and models (plus any other keys),
 * SQLite in a temporary directory, a free port, logs off, and a token for the SDK.
 */
export async function startTestGateway(document: { upstreams: unknown[]; models: unknown[] } & Record<string, unknown>, options: TestGatewayOptions = {}): Promise<TestGateway> {
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
  const { logLines } = options;
  const logger =
    logLines === undefined
      ? createLogger('silent')
      : createLogger(
          'info',
          new Writable({
            write(chunk: Buffer, _encoding, done) {
              for (const line of chunk.toString('utf8').split('\n')) if (line !== '') logLines.push(JSON.parse(line) as Record<string, unknown>);
              done();
            },
          }),
        );
  const gateway = await startGateway(loadConfig({ configPath, env: options.env ?? {} }).config, { logger });
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
