import { createServer, type Server } from 'node:http';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';
import { requestLogEntry } from '../support/request-log-entries.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

/**
 * The console in Debian's chromium (TEST_CHROMIUM), driven by playwright-core: what an operator
 * does by hand at /console, against a real gateway whose traffic comes from the official SDK.
 * Screenshots of every page go to CONSOLE_SCREENSHOTS (docs/console/ when refreshing the docs),
 * else a temporary folder.
 */
const executablePath = process.env['TEST_CHROMIUM'];
const screenshots = resolve(process.env['CONSOLE_SCREENSHOTS'] ?? join(tmpdir(), 'switchyard-console-screenshots'));
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];
const STEP_TIMEOUT = 60_000;
const HOUR = 3_600_000;

describe.skipIf(!executablePath)('the console in a browser', () => {
  let upstreams: Record<'a' | 'b', FakeOpenAIUpstream>;
  let harness: TestGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let adminToken: string;
  let consoleUrl: string;
  const cspViolations: string[] = [];
  const sessionId = `console-e2e-${Date.now().toString(36)}`;
  let createdSecret = '';
  let createdTokenId = '';
  let movedRequestId = '';

  beforeAll(async () => {
    mkdirSync(screenshots, { recursive: true });
    upstreams = { a: await startFakeOpenAIUpstream(), b: await startFakeOpenAIUpstream() };
    harness = await startTestGateway({
      upstreams: [
        { id: 'openai-primary', provider: 'openai', base_url: upstreams.a.url, api_key: 'sk-primary' },
        { id: 'openai-backup', provider: 'openai', base_url: upstreams.b.url, api_key: 'sk-backup' },
      ],
      models: [
        {
          id: 'gpt-4o-mini',
          type: 'chat',
          strategy: 'ordered',
          price: { input_per_mtok: 0.15, output_per_mtok: 0.6 },
          routes: [
            { upstream: 'openai-primary', model: 'gpt-4o-mini', priority: 0 },
            { upstream: 'openai-backup', model: 'gpt-4o-mini', priority: 1 },
          ],
        },
        { id: 'gpt-4o', type: 'chat', routes: [{ upstream: 'openai-backup', model: 'gpt-4o' }] },
      ],
      request_log: { flush_interval_ms: 50 },
    });
    adminToken = (await harness.gateway.tokens.create({ team: 'platform', name: 'operator', scopes: ['admin'] })).secret;
    consoleUrl = `${harness.gateway.url}/console/`;
    await seedEarlierTraffic(harness);
    browser = await chromium.launch({ executablePath: executablePath as string, args: CHROMIUM_FLAGS });
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
  }, STEP_TIMEOUT);

  afterAll(async () => {
    await browser?.close();
    await harness?.close();
    await upstreams?.a.close();
    await upstreams?.b.close();
  });

  async function shot(name: string, target: Page = page): Promise<void> {
    await target.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });
  }

  async function nav(name: string): Promise<void> {
    await page.getByRole('navigation').getByRole('link', { name, exact: true }).click();
  }

  async function signIn(target: Page): Promise<void> {
    await target.goto(consoleUrl);
    await target.getByRole('heading', { name: 'Sign in' }).waitFor();
    await target.getByLabel('Admin token').fill(adminToken);
    await target.getByRole('button', { name: 'Sign in' }).click();
    await target.getByRole('heading', { name: 'Requests', level: 1 }).waitFor();
  }

  it(
    "signs in with an admin token, by keyboard, keeping it out of the page's storage; the page has a CSP",
    async () => {
      const response = await page.goto(consoleUrl);
      const csp = response?.headers()['content-security-policy'] ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await shot('sign-in');
      // Keyboard only: the token field is reached with Tab and the form sent with Enter.
      await page.getByLabel('Admin token').focus();
      await page.keyboard.type(adminToken);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Requests', level: 1 }).waitFor();
      // Strings: the page's globals are not this (Node) program's.
      const stored = await page.evaluate<string>('JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, cookie: document.cookie })');
      expect(stored).not.toContain(adminToken);
      expect(stored).not.toContain('switchyard_console');
      const cookie = (await context.cookies(harness.gateway.url + '/admin/v1')).find((candidate) => candidate.name === 'switchyard_console');
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/admin/v1' });
    },
    STEP_TIMEOUT,
  );

  it(
    'creates a token in Settings → API Tokens and shows its secret once',
    async () => {
      await nav('Settings');
      await page.getByRole('heading', { name: 'API Tokens', level: 1 }).waitFor();
      // By keyboard: Enter opens the form with the focus in its first field, Escape closes it and
      // gives the focus back to the button.
      const create = page.getByRole('button', { name: 'Create token' });
      await create.focus();
      await page.keyboard.press('Enter');
      await page.getByRole('dialog').waitFor();
      expect(
        await page
          .getByRole('dialog')
          .getByLabel('Name', { exact: true })
          .evaluate((element) => element === element.ownerDocument.activeElement),
      ).toBe(true);
      await page.keyboard.press('Escape');
      await page.getByRole('dialog').waitFor({ state: 'detached' });
      expect(await create.evaluate((element) => element === element.ownerDocument.activeElement)).toBe(true);
      await create.click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Name', { exact: true }).fill('checkout-service');
      await dialog.getByLabel('Team', { exact: true }).fill('search');
      await dialog.getByLabel('Requests per minute').fill('600');
      await dialog.getByRole('button', { name: 'Create', exact: true }).click();
      const secret = page.getByTestId('token-secret');
      await secret.waitFor();
      createdSecret = ((await secret.textContent()) ?? '').trim();
      expect(createdSecret).toMatch(/^svc_[A-Za-z0-9]{43}$/);
      await page.getByRole('button', { name: 'Copy' }).waitFor();
      await shot('api-tokens-secret');
      await page.getByRole('button', { name: 'Done' }).click();
      const created = (await harness.gateway.tokens.list({ limit: 1_000 })).data.find((record) => record.name === 'checkout-service');
      expect(created).toBeDefined();
      createdTokenId = created?.id as string;
      expect(created?.team).toBe('search');
      expect(created?.limits.rpm).toBe(600);
      const row = page.locator(`tr[data-token-id="${createdTokenId}"]`);
      await row.waitFor();
      expect(await row.textContent()).toContain('checkout-service');
      // The secret is shown once: the list does not carry it.
      expect(await page.content()).not.toContain(createdSecret);
      // Edit: a limit changed, a scope taken away.
      await row.getByRole('button', { name: 'Edit' }).click();
      const edit = page.getByRole('dialog');
      await edit.getByLabel('Requests per minute').fill('1200');
      await edit.getByLabel('audio:speak', { exact: true }).uncheck();
      await edit.getByRole('button', { name: 'Save' }).click();
      await edit.waitFor({ state: 'detached' });
      await expect.poll(async () => (await row.textContent()) ?? '').toContain('rpm 1.2k');
      const edited = await harness.gateway.tokens.get(createdTokenId);
      expect(edited.limits.rpm).toBe(1_200);
      expect(edited.scopes).not.toContain('audio:speak');
      expect(edited.scopes).toContain('chat');
    },
    STEP_TIMEOUT,
  );

  it(
    "finds the SDK's requests by session id, live, and opens one's detail: every attempt and the affinity decision",
    async () => {
      const client = new OpenAI({ apiKey: createdSecret, baseURL: `${harness.gateway.url}/v1`, maxRetries: 0, defaultHeaders: { 'X-Session-Id': sessionId } });
      const ask = async (content: string): Promise<string> => {
        const { response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }).withResponse();
        return response.headers.get('x-request-id') as string;
      };
      // The primary's prompt cache warms up over the first two turns; the backup starts cold.
      upstreams.a.options.promptUsage = { prompt_tokens: 1_210, cached_tokens: 0 };
      await ask('What is a switchyard?');
      upstreams.a.options.promptUsage = { prompt_tokens: 1_460, cached_tokens: 1_152 };
      await ask('And who runs one?');
      upstreams.b.options.promptUsage = { prompt_tokens: 1_720, cached_tokens: 0 };
      await nav('Requests');
      await page.getByLabel('Session id').fill(sessionId);
      await page.getByLabel('Session id').press('Enter');
      await expect.poll(() => page.locator('tr[data-request-id]').count(), { timeout: 10_000 }).toBe(2);
      expect(page.url()).toContain(`session_id=${sessionId}`);
      // The third turn is rate limited on the primary (429, for ten minutes) and answered by the
      // backup: the session moves. (One caller's 500 would not cool the primary: docs/routing.md.)
      // It appears in the open table without a reload.
      // The rows shown keep their DOM nodes when the new one arrives (keyed, memoised rows).
      await page.locator('tr[data-request-id]').evaluateAll((rows) => rows.forEach((row) => row.setAttribute('data-seen', 'before')));
      upstreams.a.failNext({ status: 429, headers: { 'retry-after': '600' }, body: { error: { message: 'Rate limit reached', type: 'requests' } } });
      movedRequestId = await ask('Tell me more.');
      await expect.poll(() => page.locator('tr[data-request-id]').count(), { timeout: 15_000 }).toBe(3);
      expect(await page.locator('tr[data-seen="before"]').count()).toBe(2);
      expect(await page.locator(`tr[data-request-id="${movedRequestId}"]`).getAttribute('data-seen')).toBeNull();
      await shot('requests');
      await page.locator(`tr[data-request-id="${movedRequestId}"] a`).first().click();
      await page.getByRole('heading', { name: 'Request', level: 1 }).waitFor();
      // The heading comes before the request's own data: wait for the page to stop loading.
      await expect.poll(async () => (await page.locator('main').textContent()) ?? '', { timeout: 10_000 }).not.toContain('Loading…');
      const detail = (await page.locator('main').textContent()) ?? '';
      expect(detail).toContain(movedRequestId);
      expect(detail).toContain('openai-primary');
      expect(detail).toContain('upstream_rate_limited');
      expect(detail).toContain('openai-backup');
      expect(detail).toContain('moved');
      await shot('request-detail');
    },
    STEP_TIMEOUT,
  );

  it(
    'filters by status through the URL, and shows empty and error states',
    async () => {
      await page.goto(`${consoleUrl}requests?status=5xx`);
      await page.getByRole('heading', { name: 'Requests', level: 1 }).waitFor();
      await expect.poll(() => page.locator('tr[data-request-id]').count(), { timeout: 10_000 }).toBeGreaterThan(0);
      const statuses = await page
        .locator('tr[data-request-id]')
        .evaluateAll((rows) => rows.map((row) => row.querySelector('td:nth-child(2)')?.textContent?.trim() ?? ''));
      expect(
        statuses.every((status) => /^5\d\d$/.test(status)),
        statuses.join(','),
      ).toBe(true);
      await page.goto(`${consoleUrl}requests?session_id=no-such-session`);
      await page.getByText('No requests match these filters.').waitFor();
      await page.goto(`${consoleUrl}requests/req_000000000000ffffffffffffffffffff`);
      const alert = page.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toMatch(/no request/i);
    },
    STEP_TIMEOUT,
  );

  it(
    'opens the session in Sessions: its turns in order, and where it moved',
    async () => {
      await nav('Sessions');
      await page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor();
      await page.getByLabel('Session id').fill(sessionId);
      await page.getByRole('button', { name: 'Search' }).click();
      await expect.poll(() => page.locator('tr[data-request-id]').count(), { timeout: 10_000 }).toBe(3);
      const rows = await page.locator('tr[data-request-id]').evaluateAll((elements) => elements.map((element) => element.getAttribute('data-request-id')));
      expect(rows[2]).toBe(movedRequestId);
      const text = (await page.locator('main').textContent()) ?? '';
      expect(text).toContain('new');
      expect(text).toContain('kept');
      expect(text).toContain('moved');
      // Turn 2 read 1,152 tokens from the primary's cache; turn 3 moved and read none.
      const cached = await page.locator('tr[data-request-id]').evaluateAll((elements) => elements.map((element) => element.textContent ?? ''));
      expect(cached[1]).toContain('1,152');
      expect(text).toMatch(/cache/i);
      await shot('sessions');
    },
    STEP_TIMEOUT,
  );

  it(
    "shows each credential's state and resets, disables and enables one",
    async () => {
      await nav('Credentials');
      await page.getByRole('heading', { name: 'Credentials', level: 1 }).waitFor();
      const primary = page.locator('tr[data-credential-id="openai-primary"]');
      await primary.waitFor();
      // The 429 put the primary in a cooldown, shown as it is when read.
      expect(await primary.textContent()).toMatch(/cooling/i);
      await shot('credentials');
      await primary.getByRole('button', { name: 'Reset' }).click();
      await expect.poll(async () => (await primary.textContent()) ?? '').toMatch(/healthy/i);
      const backup = page.locator('tr[data-credential-id="openai-backup"]');
      // Its recent latency, as the admin API counts it (the mean time to the answer, over the error rate's window).
      const meanMs = harness.gateway.credentials.get('openai-backup').recent.mean_ms;
      expect(meanMs).not.toBeNull();
      await expect.poll(async () => (await backup.textContent()) ?? '').toContain(`${(meanMs as number).toLocaleString('en-US')} ms`);
      await backup.getByRole('button', { name: 'Disable' }).click();
      await expect.poll(async () => (await backup.textContent()) ?? '').toMatch(/disabled/i);
      expect(harness.gateway.credentials.get('openai-backup').state).toBe('disabled');
      await backup.getByRole('button', { name: 'Enable' }).click();
      await expect.poll(async () => (await backup.textContent()) ?? '').toMatch(/healthy/i);
      expect(harness.gateway.credentials.get('openai-backup').state).toBe('healthy');
    },
    STEP_TIMEOUT,
  );

  it(
    'charts usage over time',
    async () => {
      await nav('Usage');
      await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
      for (const title of ['Requests', 'Tokens', 'Errors']) await page.getByRole('heading', { name: title }).waitFor();
      await expect.poll(() => page.locator('canvas').count(), { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
      await shot('usage');
      // By token: a token with a name shows it beside its id.
      await page.getByLabel('Group by').selectOption('token');
      await page.getByText(`checkout-service (${createdTokenId})`).first().waitFor();
      expect(page.url()).toContain('group_by=token');
    },
    STEP_TIMEOUT,
  );

  it(
    'revokes the token in the console, after which the SDK gets 401',
    async () => {
      await nav('Settings');
      const row = page.locator(`tr[data-token-id="${createdTokenId}"]`);
      await row.getByRole('button', { name: 'Revoke' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Revoke token' }).click();
      await expect.poll(async () => (await row.textContent()) ?? '').toContain('revoked');
      // "Last used" is the start of the token's newest request: the third turn's.
      const moved = await harness.gateway.stores.requestSearch.find(movedRequestId);
      const token = (await (
        await fetch(`${harness.gateway.url}/admin/v1/tokens/${createdTokenId}`, { headers: { authorization: `Bearer ${adminToken}` } })
      ).json()) as { last_used_at: string | null };
      expect(token.last_used_at).toBe(new Date(moved?.createdAt as number).toISOString());
      await shot('api-tokens');
      const client = new OpenAI({ apiKey: createdSecret, baseURL: `${harness.gateway.url}/v1`, maxRetries: 0 });
      const refused = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Still there?' }] }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(OpenAI.AuthenticationError);
      expect((refused as InstanceType<typeof OpenAI.AuthenticationError>).status).toBe(401);
    },
    STEP_TIMEOUT,
  );

  it(
    'refuses a cross-site form post that carries the session cookie',
    async () => {
      const victim = await harness.gateway.tokens.create({ team: 'search', name: 'victim' });
      // Another port of the same host is the same site: SameSite=Strict lets the cookie go along.
      const evil = await servePage(
        `<!doctype html><form id="f" method="post" action="${harness.gateway.url}/admin/v1/tokens/${victim.record.id}/revoke"></form>` +
          '<script>document.getElementById("f").submit()</script>',
      );
      try {
        const attacker = await context.newPage();
        const answer = attacker.waitForResponse((response) => response.url().includes('/revoke'));
        await attacker.goto(evil.url);
        const response = await answer;
        expect(response.status()).toBe(403);
        expect(((await response.json()) as { error: { code: string } }).error.code).toBe('csrf_check_failed');
        await attacker.close();
      } finally {
        await evil.close();
      }
      expect((await harness.gateway.tokens.get(victim.record.id)).revokedAt).toBeNull();
    },
    STEP_TIMEOUT,
  );

  it(
    'signs out, after which the admin API refuses the old cookie',
    async () => {
      const cookie = (await context.cookies(`${harness.gateway.url}/admin/v1`)).find((candidate) => candidate.name === 'switchyard_console');
      expect(cookie).toBeDefined();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      const refused = await fetch(`${harness.gateway.url}/admin/v1/tokens`, { headers: { cookie: `switchyard_console=${cookie?.value}` } });
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('console_session_ended');
    },
    STEP_TIMEOUT,
  );

  it(
    'fits a phone (390 px): every page without sideways scrolling of the page',
    async () => {
      const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
      const small = await phone.newPage();
      try {
        await signIn(small);
        const pages: Array<[string, string]> = [
          ['requests', 'Requests'],
          ['sessions/' + sessionId, 'Sessions'],
          ['credentials', 'Credentials'],
          ['usage', 'Usage'],
          ['settings/tokens', 'API Tokens'],
        ];
        for (const [path, heading] of pages) {
          await small.goto(`${consoleUrl}${path}`);
          await small.getByRole('heading', { name: heading, level: 1 }).waitFor();
          await small.waitForLoadState('networkidle');
          const width = await small.evaluate<number>('document.documentElement.scrollWidth');
          expect(width, path).toBeLessThanOrEqual(390);
          await shot(`phone-${path.split('/')[0] as string}`, small);
        }
      } finally {
        await phone.close();
      }
    },
    STEP_TIMEOUT,
  );

  it('broke no Content-Security-Policy rule on any page', () => {
    expect(cspViolations).toEqual([]);
  });
});

/** Two days of earlier traffic, written through the request log's own batch insert, so the Usage charts have a history. */
async function seedEarlierTraffic(harness: TestGateway): Promise<void> {
  const now = Date.now();
  const entries = [];
  const models = ['gpt-4o-mini', 'gpt-4o'];
  const teams = ['search', 'support', 'platform'];
  for (let hour = 47; hour >= 1; hour--) {
    const start = now - hour * HOUR;
    const daytime = 0.5 + 0.5 * Math.sin(((hour % 24) / 24) * Math.PI * 2);
    const count = Math.round(4 + 10 * daytime);
    for (let index = 0; index < count; index++) {
      const model = models[index % 3 === 0 ? 1 : 0] as string;
      const team = teams[index % teams.length] as string;
      const failed = index === 0 && hour % 7 === 0;
      entries.push(
        requestLogEntry(start + index * 60_000, {
          model,
          team,
          project: null,
          tokenId: `tok_seed_${team}`,
          upstream: model === 'gpt-4o' ? 'openai-backup' : 'openai-primary',
          status: failed ? 502 : 200,
          errorCode: failed ? 'upstream_error' : null,
          promptTokens: 200 + index * 40,
          completionTokens: 80 + index * 15,
          cachedTokens: index * 20,
          latencyMs: 400 + index * 30,
          ttfbMs: 150 + index * 5,
          attempts: [
            {
              credential: model === 'gpt-4o' ? 'openai-backup' : 'openai-primary',
              outcome: failed ? 'upstream_error' : 'ok',
              status: failed ? 502 : 200,
              ms: 380 + index * 30,
            },
          ],
        }),
      );
    }
  }
  await harness.gateway.stores.requestLogs.insertBatch(entries);
}

/** A page on another port of 127.0.0.1: same site as the gateway, another origin. */
async function servePage(html: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end(html);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((done) => server.close(() => done())) };
}
