import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeChatGpt, type FakeChatGpt } from '../fake-upstreams/chatgpt-upstream.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

const REDIS_URL = process.env.TEST_REDIS_URL;
const MODEL = 'gpt-5.1-codex';

/**
 * Two gateway processes over one Redis and one account: a refresh token may be spent once, so
 * however many requests on however many replicas find the access token expired, the account is
 * refreshed exactly once, and every replica uses the new tokens.
 */
describe.skipIf(!REDIS_URL)('ChatGPT accounts across replicas sharing Redis', () => {
  const keyPrefix = `switchyard-test:${randomBytes(6).toString('hex')}:`;
  let backend: FakeChatGpt;
  let replicas: TestGateway[] = [];
  let authFile: string;

  beforeAll(async () => {
    backend = await startFakeChatGpt();
    backend.addAccount({ accountId: 'acct-shared', planType: 'pro' });
    backend.issueExpiredTokens('acct-shared');
    authFile = join(mkdtempSync(join(tmpdir(), 'switchyard-codex-replicas-')), 'auth.json');
    writeFileSync(authFile, backend.authJson('acct-shared'), { mode: 0o600 });
    const document = {
      state: { url: REDIS_URL, key_prefix: keyPrefix },
      upstreams: [{ id: 'chatgpt-shared', provider: 'codex', base_url: backend.baseUrl, token_url: backend.tokenUrl, auth_file: authFile }],
      models: [{ id: MODEL, type: 'chat', routes: [{ upstream: 'chatgpt-shared', model: MODEL }] }],
    };
    replicas = [await startTestGateway(document), await startTestGateway(document)];
    // The token endpoint is slow, so that every request arrives while the refresh is under way.
    backend.tokenDelayMs = 100;
  });

  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.close()));
    await backend?.close();
  });

  it('refreshes once for 50 concurrent requests over two replicas, and both use the new tokens', async () => {
    const tokens = await Promise.all(replicas.map(async (replica) => (await replica.gateway.tokens.create({ team: 'codex', scopes: ['native'] })).secret));
    const send = (index: number): Promise<number> => {
      const replica = index % 2;
      return fetch(`${replicas[replica]?.gateway.url}/v1/native/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens[replica]}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: MODEL,
          stream: true,
          store: false,
          input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: `hello ${index}` }] }],
          prompt_cache_key: `s-${index}`,
        }),
      }).then(async (response) => {
        await response.arrayBuffer();
        return response.status;
      });
    };
    const statuses = await Promise.all(Array.from({ length: 50 }, (_, index) => send(index)));
    expect(statuses).toEqual(Array.from({ length: 50 }, () => 200));
    expect(backend.refreshCount('acct-shared')).toBe(1);
    expect(backend.tokenRequests.map((request) => request.outcome)).toEqual(['rotated']);
    const current = backend.currentTokens('acct-shared');
    expect(new Set(backend.requests.map((request) => request.headers['authorization']))).toEqual(new Set([`Bearer ${current.accessToken}`]));
    expect((JSON.parse(readFileSync(authFile, 'utf8')) as { tokens: { refresh_token: string } }).tokens.refresh_token).toBe(current.refreshToken);
  });
});
