import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runCli } from '../../src/cli/main.js';
import { loadConfig } from '../../src/config/index.js';
import { startGateway } from '../../src/gateway.js';
import { createLogger } from '../../src/observability/logger.js';

const directory = mkdtempSync(join(tmpdir(), 'switchyard-upstream-keys-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function configFile(name: string, upstream: Record<string, unknown>): string {
  const path = join(directory, `${name}.yaml`);
  writeFileSync(
    path,
    stringify({
      server: { host: '127.0.0.1', port: 0 },
      database: { url: `sqlite:${join(directory, `${name}.db`)}` },
      logging: { level: 'silent' },
      upstreams: [upstream],
      models: [],
    }),
  );
  return path;
}

async function serve(path: string): Promise<{ code: number; stderr: string[] }> {
  const stderr: string[] = [];
  const code = await runCli(['serve', '--config', path], { stdout: () => undefined, stderr: (line) => stderr.push(line) });
  return { code, stderr };
}

describe('each provider owns its upstream keys', () => {
  it('refuses at start a key of another provider, naming the entry, the key and the keys it has', async () => {
    const refused = await serve(configFile('openai-threads', { id: 'gpt', provider: 'openai', base_url: 'http://127.0.0.1:9/v1', engine_threads: 4 }));
    expect(refused.code).toBe(78);
    expect(refused.stderr).toEqual([
      'switchyard: config error: upstreams[0].engine_threads: unknown key for provider openai (its own keys: max_embedding_inputs, responses)',
    ]);

    const anthropic = await serve(configFile('anthropic-embed', { id: 'claude', provider: 'anthropic', api_key: 'k', max_embedding_inputs: 8 }));
    expect(anthropic.stderr).toEqual([
      'switchyard: config error: upstreams[0].max_embedding_inputs: unknown key for provider anthropic (it has no keys of its own)',
    ]);
  });

  it('refuses a value of the wrong type for a key the provider has', async () => {
    const refused = await serve(configFile('local-threads', { id: 'local', provider: 'local', engine_threads: 'many' }));
    expect(refused.code).toBe(78);
    expect(refused.stderr).toEqual(['switchyard: config error: upstreams[0].engine_threads: expected integer, got "many"']);
  });

  it('accepts its own keys, numbers from ${VAR} included, and the keys every upstream has', async () => {
    const path = join(directory, 'accepted.yaml');
    writeFileSync(
      path,
      stringify({
        server: { host: '127.0.0.1', port: 0 },
        database: { url: `sqlite:${join(directory, 'accepted.db')}` },
        upstreams: [
          {
            id: 'azure',
            provider: 'azure',
            base_url: 'http://127.0.0.1:9',
            api_key: 'k',
            api_version: '2024-10-21',
            max_embedding_inputs: '${INPUTS}',
            max_connections: 4,
          },
          { id: 'local', provider: 'local', publish_models: false, engine_threads: '${THREADS}', cache_dir: join(directory, 'cache') },
        ],
        models: [],
      }),
    );
    const { config } = loadConfig({ configPath: path, env: { INPUTS: '16', THREADS: '2' } });
    const gateway = await startGateway(config, { logger: createLogger('silent') });
    await gateway.shutdown();
  });
});
