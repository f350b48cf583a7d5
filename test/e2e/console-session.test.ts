import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown> & { error?: { code: string; message: string } };
}

/**
 * The console's sign-in as the server sees it (docs/console.md): a bearer admin token exchanged
 * for an httpOnly cookie, the CSRF token and Origin checks on calls that change something, and a
 * sign-out that ends the session on the server. The browser suite (console.browser.test.ts)
 * drives the same through the real page.
 */
describe('console sessions', () => {
  let harness: TestGateway;
  let adminToken: string;
  let adminTokenId: string;
  let origin: string;

  beforeAll(async () => {
    harness = await startTestGateway({ upstreams: [], models: [] });
    const created = await harness.gateway.tokens.create({ team: 'ops', name: 'console operator', scopes: ['admin'] });
    adminToken = created.secret;
    adminTokenId = created.record.id;
    origin = harness.gateway.url;
  });
  afterAll(async () => {
    await harness.close();
  });

  async function call(method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<Answer> {
    const response = await fetch(`${harness.gateway.url}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text === '' ? {} : (JSON.parse(text) as Answer['body']) };
  }

  async function signIn(token = adminToken): Promise<{ cookie: string; csrf: string; answer: Answer }> {
    const answer = await call('POST', '/admin/v1/console/session', { authorization: `Bearer ${token}` });
    const setCookie = answer.headers.get('set-cookie') ?? '';
    return { cookie: setCookie.split(';')[0] ?? '', csrf: String(answer.body['csrf_token']), answer };
  }

  it('exchanges an admin token for an httpOnly, SameSite=Strict cookie and a CSRF token', async () => {
    const { cookie, csrf, answer } = await signIn();
    expect(answer.status).toBe(201);
    const setCookie = answer.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^switchyard_console=[A-Za-z0-9_-]{43};/);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).toContain('Path=/admin/v1');
    expect(setCookie).not.toContain('Secure');
    expect(answer.body).toMatchObject({ object: 'console_session', token: { id: adminTokenId, name: 'console operator', team: 'ops' } });
    expect(csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The cookie alone reads the admin API, and a reloaded page gets its CSRF token back.
    expect((await call('GET', '/admin/v1/tokens', { cookie })).status).toBe(200);
    const again = await call('GET', '/admin/v1/console/session', { cookie });
    expect(again.status).toBe(200);
    expect(again.body['csrf_token']).toBe(csrf);
    expect(again.body['signed_in']).toBe(true);
    // Nothing in the answers carries the admin token.
    expect(JSON.stringify(answer.body)).not.toContain(adminToken);
  });

  it('refuses to open a session for a token without the admin scope, or without a token', async () => {
    const user = await harness.gateway.tokens.create({ team: 'ops', scopes: ['chat'] });
    const refused = await signIn(user.secret);
    expect(refused.answer.status).toBe(403);
    expect(refused.answer.body.error?.code).toBe('insufficient_scope');
    expect(refused.answer.headers.get('set-cookie')).toBeNull();
    const anonymous = await call('POST', '/admin/v1/console/session');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error?.code).toBe('missing_api_key');
  });

  it('refuses a state-changing call with the cookie but without the CSRF token or from another origin, and changes nothing', async () => {
    const { cookie, csrf } = await signIn();
    const before = await harness.gateway.tokens.list({ limit: 1_000 });
    const attempts: Array<[string, Record<string, string>]> = [
      ['no CSRF token', { cookie, origin }],
      ['a wrong CSRF token', { cookie, origin, 'x-csrf-token': 'A'.repeat(43) }],
      ['no Origin', { cookie, 'x-csrf-token': csrf }],
      ['another port of the same host', { cookie, origin: origin.replace(/:\d+$/, ':1'), 'x-csrf-token': csrf }],
      ['another host', { cookie, origin: 'http://evil.example', 'x-csrf-token': csrf }],
      ['an opaque origin', { cookie, origin: 'null', 'x-csrf-token': csrf }],
    ];
    for (const [why, headers] of attempts) {
      const answer = await call('POST', '/admin/v1/tokens', headers, { team: 'ops', name: 'forged' });
      expect(answer.status, why).toBe(403);
      expect(answer.body.error?.code, why).toBe('csrf_check_failed');
    }
    // A form post (what a cross-site page can send without CORS) is refused the same way.
    const form = await fetch(`${harness.gateway.url}/admin/v1/tokens`, {
      method: 'POST',
      headers: { cookie, origin: 'http://127.0.0.1:1', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'team=ops&name=forged',
    });
    expect(form.status).toBe(403);
    expect(((await form.json()) as { error: { code: string } }).error.code).toBe('csrf_check_failed');
    const after = await harness.gateway.tokens.list({ limit: 1_000 });
    expect(after.data.length).toBe(before.data.length);
    // With both, the call goes through.
    const made = await call('POST', '/admin/v1/tokens', { cookie, origin, 'x-csrf-token': csrf }, { team: 'ops', name: 'made in the console' });
    expect(made.status).toBe(201);
    expect(String(made.body['secret'])).toMatch(/^svc_/);
  });

  it('takes the cookie on the admin API only, never on /v1', async () => {
    const { cookie } = await signIn();
    const answer = await call('GET', '/v1/models', { cookie });
    expect(answer.status).toBe(401);
    expect(answer.body.error?.code).toBe('missing_api_key');
  });

  it('signs out on the server: the old cookie is refused from then on', async () => {
    const { cookie, csrf } = await signIn();
    const ended = await call('DELETE', '/admin/v1/console/session', { cookie, origin, 'x-csrf-token': csrf });
    expect(ended.status).toBe(200);
    expect(ended.body).toEqual({ object: 'console_session', ended: true });
    expect(ended.headers.get('set-cookie')).toMatch(/^switchyard_console=;.*Expires=Thu, 01 Jan 1970/);
    const refused = await call('GET', '/admin/v1/tokens', { cookie });
    expect(refused.status).toBe(401);
    expect(refused.body.error?.code).toBe('console_session_ended');
    // The console's own probe answers "not signed in" (not an error the browser logs), and drops the stale cookie.
    const probe = await call('GET', '/admin/v1/console/session', { cookie });
    expect(probe.status).toBe(200);
    expect(probe.body).toEqual({ object: 'console_session', signed_in: false });
    expect(probe.headers.get('set-cookie')).toMatch(/^switchyard_console=;.*Expires=Thu, 01 Jan 1970/);
    expect(await call('GET', '/admin/v1/console/session')).toMatchObject({ status: 200, body: { object: 'console_session', signed_in: false } });
  });

  it('ends every session of a token when the token is revoked', async () => {
    const operator = await harness.gateway.tokens.create({ team: 'ops', scopes: ['admin'] });
    const { cookie } = await signIn(operator.secret);
    expect((await call('GET', '/admin/v1/tokens', { cookie })).status).toBe(200);
    await harness.gateway.tokens.revoke(operator.record.id);
    const refused = await call('GET', '/admin/v1/tokens', { cookie });
    expect(refused.status).toBe(401);
    expect(refused.body.error?.code).toBe('revoked_api_key');
  });

  it('serves the console with a CSP that allows no inline script, its page for app paths, and 404 for a missing asset', async () => {
    expect(existsSync(new URL('../../dist/web/index.html', import.meta.url)), 'the console is built by `npm run build` (npm test runs it first)').toBe(true);
    for (const path of ['/console', '/console/', '/console/requests?session_id=abc', '/console/settings/tokens']) {
      const response = await fetch(`${harness.gateway.url}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type'), path).toMatch(/^text\/html/);
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("script-src 'self'");
      expect(csp, path).not.toContain('unsafe-inline');
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      const page = await response.text();
      expect(page).toContain('<div id="root">');
      // No inline script: every <script> names its file.
      for (const script of page.match(/<script\b[^>]*>/g) ?? []) expect(script).toMatch(/\bsrc="\/console\/assets\//);
    }
    // The app's script: pre-compressed at build time, cached for good (its name changes with its content).
    const page = await (await fetch(`${harness.gateway.url}/console/`)).text();
    const script = /<script\b[^>]*\bsrc="(\/console\/assets\/[^"]+\.js)"/.exec(page)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${harness.gateway.url}${script}`, { headers: { 'accept-encoding': 'br' } });
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-encoding')).toBe('br');
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await asset.text()).length).toBeGreaterThan(1_000);
    const missing = await fetch(`${harness.gateway.url}/console/assets/missing.js`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-security-policy')).not.toBeNull();
  });
});
