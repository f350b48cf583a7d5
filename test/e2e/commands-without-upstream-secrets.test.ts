import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { startGateway } from '../../src/gateway.js';
import { createLogger } from '../../src/observability/logger.js';
import { cli } from '../support/run-cli.js';

const EXAMPLE = fileURLToPath(new URL('../../switchyard.example.yaml', import.meta.url));

/**
 * The README's "Quick start with your providers": the example config copied to ./switchyard.yaml,
 * the gateway started in a terminal that has OPENAI_API_KEY, the token made in another that has not.
 */
describe("the README's quick start with your providers: the second terminal has no OPENAI_API_KEY", () => {
  const directory = mkdtempSync(join(tmpdir(), 'switchyard-quick-start-'));
  const before = {
    cwd: process.cwd(),
    key: process.env['OPENAI_API_KEY'],
    database: process.env['SWITCHYARD_DATABASE_URL'],
    config: process.env['SWITCHYARD_CONFIG'],
  };

  beforeAll(() => {
    copyFileSync(EXAMPLE, join(directory, 'switchyard.yaml'));
    // The example's own database.url, sqlite:./data/switchyard.db, relative to the directory the commands run in.
    process.chdir(directory);
    delete process.env['OPENAI_API_KEY'];
    delete process.env['SWITCHYARD_DATABASE_URL'];
    delete process.env['SWITCHYARD_CONFIG'];
  });
  afterAll(() => {
    process.chdir(before.cwd);
    for (const [name, value] of [
      ['OPENAI_API_KEY', before.key],
      ['SWITCHYARD_DATABASE_URL', before.database],
      ['SWITCHYARD_CONFIG', before.config],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    rmSync(directory, { recursive: true, force: true });
  });

  it('tokens create works, and the gateway started with the key serves the token', async () => {
    const created = await cli('tokens', 'create', '--team', 'search', '--name', 'laptop');
    expect(created.stderr.join('\n')).not.toMatch(/config error/);
    expect(created.code).toBe(0);
    expect(created.stdout).toHaveLength(1);
    const token = created.stdout[0] as string;
    expect(token).toMatch(/^svc_/);
    expect(created.stderr[0]).toBe(`database: sqlite:./data/switchyard.db (config: ${join(directory, 'switchyard.yaml')})`);

    // The first terminal: the same file, with the key.
    const { config } = loadConfig({ env: { ...process.env, OPENAI_API_KEY: 'sk-first-terminal' } });
    const gateway = await startGateway(config, { logger: createLogger('silent') });
    try {
      const models = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${token}` } });
      expect(models.status).toBe(200);
      expect(((await models.json()) as { data: Array<{ id: string }> }).data.map((model) => model.id)).toEqual(['gpt-4o-mini', 'llama3']);
    } finally {
      await gateway.shutdown();
    }
  });

  it('the other commands that never call an upstream work too', async () => {
    for (const argv of [
      ['tokens', 'list', '--json'],
      ['teams', 'list', '--json'],
      ['teams', 'create', 'ranking'],
      ['projects', 'create', 'web', '--team', 'ranking'],
      ['projects', 'list', '--team', 'ranking'],
      ['requests', 'list'],
      ['credentials', 'list'],
    ]) {
      const result = await cli(...argv);
      expect({ argv, code: result.code, errors: result.stderr.filter((line) => line.startsWith('switchyard:')) }).toEqual({ argv, code: 0, errors: [] });
    }
  });

  it('what they do read is still checked: a mistake in database is refused with exit 78', async () => {
    process.env['SWITCHYARD_DATABASE_URL'] = 'mysql://nope';
    try {
      const result = await cli('tokens', 'list');
      expect(result.code).toBe(78);
      expect(result.stderr).toEqual([
        'switchyard: config error: database.url (SWITCHYARD_DATABASE_URL): must match ^(sqlite:|postgres://|postgresql://), got "mysql://nope"',
      ]);
    } finally {
      delete process.env['SWITCHYARD_DATABASE_URL'];
    }
  });

  it('serve still refuses to start without the key, exit 78 and one line naming it', async () => {
    const result = await cli('serve');
    expect(result.code).toBe(78);
    expect(result.stderr).toEqual([
      'switchyard: config error: upstreams[0].api_key: environment variable OPENAI_API_KEY is not set (write ${OPENAI_API_KEY:-} to allow it empty)',
    ]);
  });
});
