import { Agent, request, type Dispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: Record<string, unknown> & { error?: { code: string; message: string } };
}

/**
 * `server.trusted_proxies` without a proxy (docs/reverse-proxy.md): the test plays the proxy from
 * 127.0.0.1, which the gateway trusts, and a stranger from 127.0.0.2, which it does not. The
 * same through a real nginx is test/e2e/reverse-proxy.test.ts.
 */
describe('forwarded headers from trusted proxies only', () => {
  let upstream: FakeOpenAIUpstream;
  let harness: TestGateway;
  const logLines: Array<Record<string, unknown>> = [];
  const proxy = new Agent({ localAddress: '127.0.0.1' });
  const stranger = new Agent({ localAddress: '127.0.0.2' });
  let adminToken: string;

  beforeAll(async () => {
    upstream = await startFakeOpenAIUpstream();
    harness = await startTestGateway(
      {
        server: { host: '127.0.0.1', port: 0, shutdown_timeout_ms: 5_000, trusted_proxies: ['127.0.0.1/32', '10.0.0.0/8'] },
        upstreams: [{ id: 'openai', provider: 'openai', base_url: upstream.url, api_key: 'sk-upstream' }],
        models: [{ id: 'gpt-4o-mini', type: 'chat', routes: [{ upstream: 'openai', model: 'gpt-4o-mini-2024-07-18' }] }],
      },
      { logLines },
    );
    adminToken = (await harness.gateway.tokens.create({ team: 'ops', scopes: ['admin'] })).secret;
  });
  afterAll(async () => {
    await harness.close();
    await upstream.close();
    await proxy.close();
    await stranger.close();
  });

  async function call(from: Agent, method: Dispatcher.HttpMethod, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
    const response = await request(`${harness.gateway.url}${path}`, {
      method,
      dispatcher: from,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.body.text();
    return { status: response.statusCode, headers: response.headers, json: text === '' ? {} : (JSON.parse(text) as Answer['json']) };
  }

  async function signIn(from: Agent): Promise<{ cookie: string; csrf: string }> {
    const answer = await call(from, 'POST', '/admin/v1/console/session', { authorization: `Bearer ${adminToken}` });
    expect(answer.status).toBe(201);
    return { cookie: String(answer.headers['set-cookie'] ?? '').split(';')[0] ?? '', csrf: String(answer.json['csrf_token']) };
  }

  async function createToken(from: Agent, headers: Record<string, string>): Promise<Answer> {
    const { cookie, csrf } = await signIn(from);
    return call(from, 'POST', '/admin/v1/tokens', { cookie, 'x-csrf-token': csrf, ...headers }, { team: 'ops', name: 'console' });
  }

  it('takes the console origin from X-Forwarded-Host and -Proto of a trusted proxy', async () => {
    const forwarded = { 'x-forwarded-host': 'gw.example.com', 'x-forwarded-proto': 'https' };
    expect((await createToken(proxy, { ...forwarded, origin: 'https://gw.example.com' })).status).toBe(201);
    // The default port may be written or not.
    expect(
      (await createToken(proxy, { 'x-forwarded-host': 'gw.example.com:443', 'x-forwarded-proto': 'https', origin: 'https://gw.example.com' })).status,
    ).toBe(201);
    // The proxy said https: an http page of that host is another origin.
    const http = await createToken(proxy, { ...forwarded, origin: 'http://gw.example.com' });
    expect(http.status).toBe(403);
    expect(http.json.error?.message).toContain("the host the gateway sees ('https://gw.example.com')");
    // A chain's last value is the nearest proxy's.
    expect(
      (await createToken(proxy, { 'x-forwarded-host': 'evil.example, gw.example.com', 'x-forwarded-proto': 'http, https', origin: 'https://gw.example.com' }))
        .status,
    ).toBe(201);
  });

  it('ignores X-Forwarded-Host from a peer it does not trust, and says so', async () => {
    const refused = await createToken(stranger, { 'x-forwarded-host': 'gw.example.com', 'x-forwarded-proto': 'https', origin: 'https://gw.example.com' });
    expect(refused.status).toBe(403);
    expect(refused.json.error?.code).toBe('csrf_check_failed');
    const message = refused.json.error?.message ?? '';
    expect(message).toContain("Origin 'https://gw.example.com' does not match the host the gateway sees");
    expect(message).toContain('server.trusted_proxies');
    expect(message).toContain('X-Forwarded-Host/-Proto were ignored: this connection came from 127.0.0.2');
    // Its own Host still works, as without a proxy.
    expect((await createToken(stranger, { origin: harness.gateway.url })).status).toBe(201);
  });

  it('says why a call without Origin is refused', async () => {
    const refused = await createToken(proxy, {});
    expect(refused.status).toBe(403);
    expect(refused.json.error?.message).toContain('carries no Origin');
  });

  it('logs the right-most X-Forwarded-For address that is not a trusted proxy, and the peer for a stranger', async () => {
    const clientOf = async (from: Agent, forwardedFor: string): Promise<unknown> => {
      const answer = await call(
        from,
        'POST',
        '/v1/chat/completions',
        { authorization: `Bearer ${harness.token}`, 'x-forwarded-for': forwardedFor },
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] },
      );
      expect(answer.status).toBe(200);
      const requestId = String(answer.headers['x-request-id']);
      for (let attempt = 0; attempt < 200; attempt++) {
        const line = logLines.find((candidate) => candidate['msg'] === 'request' && candidate['requestId'] === requestId);
        if (line !== undefined) return line['client'];
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`no access line for ${requestId}`);
    };
    expect(await clientOf(proxy, '203.0.113.7')).toBe('203.0.113.7');
    expect(await clientOf(proxy, '1.1.1.1, 203.0.113.7, 10.0.0.2')).toBe('203.0.113.7');
    expect(await clientOf(proxy, '2001:db8::7')).toBe('2001:db8::7');
    expect(await clientOf(stranger, '203.0.113.7')).toBe('127.0.0.2');
  });
});
