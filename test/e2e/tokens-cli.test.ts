import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../support/run-cli.js';
import { startOpenAIFakeGateway, type OpenAIFakeGateway } from '../support/start-openai-fake-gateway.js';
import { describeEachBackend } from '../support/database-backends.js';

const TOKEN_PATTERN = /^svc_[A-Za-z0-9]{43}$/;
describeEachBackend('switchyard tokens, against a running gateway', (backend) => {
  let harness: OpenAIFakeGateway;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const database = await backend.empty();
    drop = database.dispose;
    harness = await startOpenAIFakeGateway({ databaseUrl: database.url });
  });
  afterAll(async () => {
    await harness.close();
    await drop();
  });

  it('refuses a mistyped model id (exit 64) naming the model meant, and creates nothing', async () => {
    const before = (await harness.gateway.stores.tokens.list()).length;
    const refused = await cli('tokens', 'create', '--team', 'ml', '--models', 'gpt4o-mini', '--config', harness.configPath);
    expect(refused.code).toBe(64);
    expect(refused.stdout).toEqual([]);
    expect(refused.stderr.join('\n')).toContain("did you mean 'gpt-4o-mini'");
    expect((await harness.gateway.stores.tokens.list()).length).toBe(before);
  });

  it('creates a token, printed alone on stdout, that the running gateway accepts on the next request', async () => {
    // A token's project must exist: the team first (a project never creates it), then the project.
    expect((await cli('teams', 'create', 'ml', '--config', harness.configPath)).code).toBe(0);
    expect((await cli('projects', 'create', 'ranker', '--team', 'ml', '--config', harness.configPath)).code).toBe(0);
    const created = await cli(
      'tokens',
      'create',
      '--team',
      'ml',
      '--project',
      'ranker',
      '--scopes',
      'chat,models:read',
      '--models',
      'gpt-4o-mini',
      '--expires-in',
      '30d',
      '--name',
      'ci',
      '--rpm',
      '600',
      '--usd-per-day',
      '2.5',
      '--config',
      harness.configPath,
    );
    expect(created.code).toBe(0);
    expect(created.stdout).toHaveLength(1);
    const token = created.stdout.at(-1) as string;
    expect(token).toMatch(TOKEN_PATTERN);
    expect(created.stderr.join('\n')).toMatch(/scopes: +chat, models:read/);

    const client = harness.clientFor(token);
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
    expect(completion.choices[0]?.message.content).toBeTruthy();
    expect((await client.models.list()).data.map((model) => model.id)).toEqual(['gpt-4o-mini']);
    await expect(client.chat.completions.create({ model: 'pooled-chat', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toBeInstanceOf(
      OpenAI.PermissionDeniedError,
    );

    const listed = await cli('tokens', 'list', '--json', '--config', harness.configPath);
    const tokens = JSON.parse(listed.stdout.join('\n')) as Array<Record<string, unknown>>;
    const entry = tokens.find((item) => item['name'] === 'ci');
    expect(entry).toMatchObject({
      team: 'ml',
      project: 'ranker',
      status: 'active',
      scopes: ['chat', 'models:read'],
      models: ['gpt-4o-mini'],
      limits: { rpm: 600, usd_per_day: 2.5 },
    });
    expect(Date.parse(entry?.['expires_at'] as string) - Date.now()).toBeGreaterThan(29 * 86_400_000);
    // Neither the secret nor its hash is ever shown.
    expect(listed.stdout.join('\n')).not.toContain(token.slice(10));
    expect(Object.keys(entry ?? {})).not.toContain('secret_hash');
    const table = await cli('tokens', 'list', '--config', harness.configPath);
    expect(table.stdout[0]).toMatch(/^ID +STATUS +TEAM/);
    expect(table.stdout.join('\n')).not.toContain(token.slice(10));

    const revoked = await cli('tokens', 'revoke', entry?.['id'] as string, '--config', harness.configPath);
    expect(revoked).toMatchObject({ code: 0, stdout: [`Revoked ${String(entry?.['id'])}.`] });
    const refusal = async () => {
      const error = await client.models.list().catch((caught: unknown) => caught);
      return error instanceof OpenAI.AuthenticationError ? error.code : 'accepted';
    };
    if (backend.name === 'sqlite') {
      // Seen on the very next request: the gateway checks SQLite's data_version before answering.
      expect(await refusal()).toBe('revoked_api_key');
    } else {
      // PostgreSQL tells every replica by LISTEN/NOTIFY, which arrives within milliseconds.
      await expect.poll(refusal, { timeout: 2_000, interval: 5 }).toBe('revoked_api_key');
    }
    const after = JSON.parse((await cli('tokens', 'list', '--json', '--config', harness.configPath)).stdout.join('\n')) as Array<Record<string, unknown>>;
    expect(after.find((item) => item['id'] === entry?.['id'])?.['status']).toBe('revoked');
  });
});

describe('switchyard tokens: bad input', () => {
  let harness: OpenAIFakeGateway;
  beforeAll(async () => {
    harness = await startOpenAIFakeGateway();
  });
  afterAll(async () => {
    await harness.close();
  });

  const refused: Array<[string, string[], number, RegExp]> = [
    ['a malformed duration', ['--team', 't', '--expires-in', '30x'], 64, /--expires-in: expected a duration/],
    ['an unknown scope', ['--team', 't', '--scopes', 'chat,fly'], 64, /unknown scope fly/],
    ['an empty team', ['--team', ' '], 64, /team: must be 1 to 128/],
    ['a project the team does not have', ['--team', 't', '--project', 'nope'], 64, /project: team 't' has no project 'nope'/],
    ['a limit that is not a positive integer', ['--team', 't', '--rpm', '0'], 64, /--rpm: expected a positive integer, got "0"/],
    ['a dollar limit that is not a positive number', ['--team', 't', '--usd-per-day', 'lots'], 64, /--usd-per-day: expected a positive number, got "lots"/],
    ['a missing team', [], 64, /required option '--team <team>'/],
  ];
  for (const [name, argv, code, message] of refused) {
    it(`refuses ${name} and creates nothing`, async () => {
      const before = (await harness.gateway.stores.tokens.list()).length;
      const result = await cli('tokens', 'create', ...argv, '--config', harness.configPath);
      expect(result.code).toBe(code);
      expect(result.stdout).toEqual([]);
      expect(result.stderr.join('\n')).toMatch(message);
      expect((await harness.gateway.stores.tokens.list()).length).toBe(before);
    });
  }

  it('says so when revoking a token that does not exist', async () => {
    const result = await cli('tokens', 'revoke', 'tok_nope', '--config', harness.configPath);
    expect(result.code).toBe(1);
    // After the line naming the database the command used.
    expect(result.stderr.at(-1)).toBe("switchyard: No token has the id 'tok_nope'.");
  });

  it('exits non-zero with one line naming the key when the config is invalid', async () => {
    const bad = join(harness.directory, 'bad.yaml');
    writeFileSync(bad, 'server:\n  port: -1\n');
    const result = await cli('serve', '--config', bad);
    expect(result.code).toBe(78);
    expect(result.stderr).toEqual(['switchyard: config error: server.port: expected integer to be greater or equal to 0, got -1']);
  });

  it('makes tokens with at least 128 bits of randomness, never twice the same', async () => {
    const secrets = new Set<string>();
    for (let index = 0; index < 200; index++) secrets.add((await harness.gateway.tokens.create({ team: 'entropy' })).secret);
    expect(secrets.size).toBe(200);
    for (const secret of secrets) expect(secret).toMatch(TOKEN_PATTERN);
    // 43 characters drawn from all 62 (checked below) carry ~256 bits, above the 128-bit floor.
    const characters = new Set([...secrets].flatMap((secret) => [...secret.slice(4)]));
    expect(characters.size).toBe(62);
  });
});
