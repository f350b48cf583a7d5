import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { accountSealContext } from '../../src/admin/index.js';
import { SecretBox } from '../../src/core/index.js';
import { startFakeChatGpt, type FakeChatGpt } from '../fake-upstreams/chatgpt-upstream.js';
import { cli } from '../support/run-cli.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

/**
 * ChatGPT accounts added while the gateway runs — through the admin API and through the CLI on
 * the same database — are stored sealed under SWITCHYARD_SECRET_KEY and served within seconds by
 * the models with a route of `accounts: codex`; refreshed tokens go back to the database, sealed.
 */
const MODEL = 'gpt-5.1-codex';
const SECRET_KEY = 'a'.repeat(64);

let backend: FakeChatGpt;
let running: TestGateway;
let adminToken: string;
let nativeToken: string;

function native(prompt = 'hello'): Promise<Response> {
  return fetch(`${running.gateway.url}/v1/native/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${nativeToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: MODEL,
      stream: true,
      store: false,
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: prompt }] }],
    }),
  });
}

function admin(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${running.gateway.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  return vi.waitFor(async () => expect(await check(), `${what} did not happen within 5 s`).toBe(true), { timeout: 5_000, interval: 50 });
}

beforeAll(async () => {
  backend = await startFakeChatGpt();
  for (const account of ['acct-api', 'acct-cli']) backend.addAccount({ accountId: account, planType: 'plus' });
  running = await startTestGateway(
    {
      // Never called: its id is one an account may not take.
      upstreams: [{ id: 'openai-configured', provider: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-test' }],
      models: [{ id: MODEL, type: 'chat', routes: [{ accounts: 'codex', model: MODEL }] }],
    },
    { env: { SWITCHYARD_SECRET_KEY: SECRET_KEY } },
  );
  adminToken = (await running.gateway.tokens.create({ team: 'ops', scopes: ['admin'] })).secret;
  nativeToken = (await running.gateway.tokens.create({ team: 'codex', scopes: ['native'] })).secret;
});

afterAll(async () => {
  await running?.close();
  await backend?.close();
});

describe('accounts added at run time', () => {
  it('serves none before one is added', async () => {
    const answer = await native();
    expect(answer.status).toBe(503);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('no_upstream_available');
  });

  it('serves an account added through the admin API at once, stored sealed', async () => {
    const added = await admin('POST', '/admin/v1/credentials', {
      id: 'chatgpt-api',
      provider: 'codex',
      auth: JSON.parse(backend.authJson('acct-api')) as unknown,
      base_url: backend.baseUrl,
      token_url: backend.tokenUrl,
    });
    expect(added.status).toBe(201);
    expect(await added.json()).toMatchObject({ id: 'chatgpt-api', provider: 'codex', account_id: 'acct-api', base_url: backend.baseUrl });
    const answer = await native();
    expect(answer.status).toBe(200);
    await answer.arrayBuffer();
    expect(backend.requests.at(-1)?.accountId).toBe('acct-api');

    const [record] = await running.gateway.stores.upstreamAccounts.list();
    expect(record?.sealedDocument).not.toContain(backend.currentTokens('acct-api').refreshToken);
    expect(SecretBox.fromText(SECRET_KEY)?.open(record?.sealedDocument ?? '', accountSealContext('chatgpt-api'))).toContain(
      backend.currentTokens('acct-api').refreshToken,
    );
    const listed = (await (await admin('GET', '/admin/v1/credentials/chatgpt-api')).json()) as { account: { token_store: string } };
    expect(listed.account.token_store).toBe('the database (sealed)');
  });

  it('refuses a duplicate, a configured id, a broken document, and answers what it stored', async () => {
    expect((await admin('POST', '/admin/v1/credentials', { id: 'chatgpt-api', provider: 'codex', auth: backend.authJson('acct-api') })).status).toBe(409);
    const configured = await admin('POST', '/admin/v1/credentials', { id: 'openai-configured', provider: 'codex', auth: backend.authJson('acct-api') });
    expect(configured.status).toBe(409);
    expect(((await configured.json()) as { error: { code: string; param: string } }).error).toMatchObject({ code: 'credential_exists', param: 'id' });
    const removeConfigured = await admin('DELETE', '/admin/v1/credentials/openai-configured');
    expect(removeConfigured.status).toBe(409);
    expect(((await removeConfigured.json()) as { error: { code: string } }).error.code).toBe('credential_configured');
    const broken = await admin('POST', '/admin/v1/credentials', {
      id: 'chatgpt-broken',
      provider: 'codex',
      auth: { auth_mode: 'apikey', OPENAI_API_KEY: 'sk-x' },
    });
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as { error: { param: string; message: string } }).error).toMatchObject({
      param: 'auth',
      message: expect.stringContaining('no "tokens" object'),
    });
    expect((await admin('POST', '/admin/v1/credentials', { id: 'x', provider: 'openai', auth: {} })).status).toBe(422);
    const stored = (await (await admin('GET', '/admin/v1/accounts')).json()) as { data: Array<{ id: string }> };
    expect(stored.data.map((account) => account.id)).toEqual(['chatgpt-api']);
  });

  it('writes refreshed tokens back to the database, sealed', async () => {
    const before = await running.gateway.stores.upstreamAccounts.get('chatgpt-api');
    backend.expireAccessToken('acct-api');
    const answer = await native();
    expect(answer.status).toBe(200);
    await answer.arrayBuffer();
    const after = await running.gateway.stores.upstreamAccounts.get('chatgpt-api');
    expect(after?.updatedAt).toBeGreaterThan(before?.updatedAt ?? Infinity);
    expect(SecretBox.fromText(SECRET_KEY)?.open(after?.sealedDocument ?? '', accountSealContext('chatgpt-api'))).toContain(
      backend.currentTokens('acct-api').refreshToken,
    );
  });

  it('serves an account the CLI added to the same database within seconds, and stops serving a removed one', async () => {
    const authFile = join(running.directory, 'cli-auth.json');
    writeFileSync(authFile, backend.authJson('acct-cli'), { mode: 0o600 });
    process.env['SWITCHYARD_SECRET_KEY'] = SECRET_KEY;
    try {
      const added = await cli(
        'credentials',
        'add-codex',
        '--id',
        'chatgpt-cli',
        '--auth-file',
        authFile,
        '--base-url',
        backend.baseUrl,
        '--token-url',
        backend.tokenUrl,
        '--config',
        running.configPath,
      );
      expect(added.code, added.stderr.join('\n')).toBe(0);
      expect(added.stdout).toEqual(['chatgpt-cli']);
    } finally {
      delete process.env['SWITCHYARD_SECRET_KEY'];
    }
    // Another process's change: seen at the next poll of the accounts' revision.
    await eventually(async () => running.gateway.credentials.list().some((credential) => credential.id === 'chatgpt-cli'), 'serving the CLI account');
    expect((await admin('DELETE', '/admin/v1/credentials/chatgpt-api')).status).toBe(200);
    const answer = await native();
    expect(answer.status).toBe(200);
    await answer.arrayBuffer();
    expect(backend.requests.at(-1)?.accountId).toBe('acct-cli');
    expect(running.gateway.credentials.list().map((credential) => credential.id)).toEqual(['openai-configured', 'chatgpt-cli']);
  });

  it("never lets a stored account with a configured upstream's id replace or remove that upstream", async () => {
    // Written past the service (another config's CLI could): a sealed document under the configured id.
    const sealed = SecretBox.fromText(SECRET_KEY)?.seal(backend.authJson('acct-api'), accountSealContext('openai-configured')) ?? '';
    await running.gateway.stores.upstreamAccounts.insert({
      id: 'openai-configured',
      provider: 'codex',
      settings: {},
      sealedDocument: sealed,
      createdAt: Date.now(),
      updatedAt: Date.now(),
    });
    // A change through the API makes this process read the store at once, the record above included.
    const later = {
      id: 'chatgpt-later',
      provider: 'codex',
      auth: JSON.parse(backend.authJson('acct-cli')) as unknown,
      base_url: backend.baseUrl,
      token_url: backend.tokenUrl,
    };
    expect((await admin('POST', '/admin/v1/credentials', later)).status).toBe(201);
    await eventually(async () => running.gateway.credentials.list().some((credential) => credential.id === 'chatgpt-later'), 'serving the later account');
    expect(running.gateway.credentials.get('openai-configured')).toMatchObject({ provider: 'openai', origin: 'config' });

    await running.gateway.stores.upstreamAccounts.remove('openai-configured');
    expect((await admin('DELETE', '/admin/v1/credentials/chatgpt-later')).status).toBe(200);
    await eventually(async () => !running.gateway.credentials.list().some((credential) => credential.id === 'chatgpt-later'), 'dropping the later account');
    expect(running.gateway.credentials.get('openai-configured')).toMatchObject({ provider: 'openai', origin: 'config' });
  });

  it('refuses to add an account without a secret key, saying how to set one', async () => {
    const authFile = join(running.directory, 'no-key.json');
    writeFileSync(authFile, backend.authJson('acct-cli'));
    const refused = await cli('credentials', 'add-codex', '--id', 'chatgpt-nokey', '--auth-file', authFile, '--config', running.configPath);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr.join('\n')).toContain('SWITCHYARD_SECRET_KEY');
  });
});
