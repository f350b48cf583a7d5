import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import { chromium, type Browser, type ConsoleMessage, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

/**
 * What the console shows at a common laptop size, in Debian's chromium (TEST_CHROMIUM): a sign-in
 * page that logs no error, a Credentials table whose buttons stay on screen whatever the last
 * error says, and a refused request without an upstream's timing.
 */
const executablePath = process.env['TEST_CHROMIUM'];
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];
const STEP_TIMEOUT = 60_000;
const VIEWPORT = { width: 1280, height: 800 };
/** Where the Credentials page's picture goes (CONSOLE_SCREENSHOTS, as the other console suite), else a temporary folder. */
const screenshots = resolve(process.env['CONSOLE_SCREENSHOTS'] ?? join(tmpdir(), 'switchyard-console-layout'));
/** What an upstream's error can say: long words, a URL, an account id (the row keeps 200 characters of it). */
const LONG_ERROR =
  'The server had an error while processing your request. Sorry about that! You can retry your request, or contact us through our help center at https://help.example.com/en/articles/6891839-api-error-codes-and-what-they-mean-for-organisation-org-abcdefghijklmnopqrstuvwxyz0123456789 if the error persists.';

describe.skipIf(!executablePath)('the console at 1280×800', () => {
  let upstreams: Record<'a' | 'b', FakeOpenAIUpstream>;
  let harness: TestGateway;
  let browser: Browser;
  let adminToken: string;
  let consoleUrl: string;

  beforeAll(async () => {
    mkdirSync(screenshots, { recursive: true });
    upstreams = { a: await startFakeOpenAIUpstream(), b: await startFakeOpenAIUpstream() };
    harness = await startTestGateway({
      upstreams: [
        { id: 'openai-primary-with-a-rather-long-credential-name', provider: 'openai', base_url: upstreams.a.url, api_key: 'sk-primary' },
        { id: 'openai-backup', provider: 'openai', base_url: upstreams.b.url, api_key: 'sk-backup' },
      ],
      models: [
        {
          id: 'gpt-4o-mini',
          type: 'chat',
          strategy: 'ordered',
          routes: [
            { upstream: 'openai-primary-with-a-rather-long-credential-name', model: 'gpt-4o-mini', priority: 0 },
            { upstream: 'openai-backup', model: 'gpt-4o-mini', priority: 1 },
          ],
        },
      ],
      request_log: { flush_interval_ms: 50 },
    });
    adminToken = (await harness.gateway.tokens.create({ team: 'platform', name: 'operator', scopes: ['admin'] })).secret;
    consoleUrl = `${harness.gateway.url}/console/`;
    browser = await chromium.launch({ executablePath: executablePath as string, args: CHROMIUM_FLAGS });
  }, STEP_TIMEOUT);

  afterAll(async () => {
    await browser?.close();
    await harness?.close();
    await upstreams?.a.close();
    await upstreams?.b.close();
  });

  async function signedInPage(): Promise<Page> {
    const page = await (await browser.newContext({ viewport: VIEWPORT })).newPage();
    await page.goto(consoleUrl);
    await page.getByLabel('Admin token').fill(adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Requests', level: 1 }).waitFor();
    return page;
  }

  it(
    'loads the sign-in page without an error in the browser console or a failed response',
    async () => {
      const page = await (await browser.newContext({ viewport: VIEWPORT })).newPage();
      const problems: string[] = [];
      page.on('console', (message: ConsoleMessage) => {
        if (message.type() === 'error' || message.type() === 'warning') problems.push(`console ${message.type()}: ${message.text()}`);
      });
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('response', (response) => {
        if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
      });
      page.on('requestfailed', (request) => problems.push(`failed ${request.url()}`));
      await page.goto(consoleUrl);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await page.waitForLoadState('networkidle');
      expect(problems).toEqual([]);
      // Signed in, then signed out: the page that comes back is as quiet.
      await page.getByLabel('Admin token').fill(adminToken);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Requests', level: 1 }).waitFor();
      // The first page's requests end before the reload, which would otherwise cut them short.
      await page.waitForLoadState('networkidle');
      await page.reload();
      await page.getByRole('heading', { name: 'Requests', level: 1 }).waitFor();
      await page.waitForLoadState('networkidle');
      expect(problems).toEqual([]);
    },
    STEP_TIMEOUT,
  );

  it(
    "keeps every credential's buttons inside the screen when a last error is long",
    async () => {
      upstreams.a.failNext({ status: 500, body: { error: { message: LONG_ERROR, type: 'server_error', param: null, code: null } } });
      const client = new OpenAI({
        apiKey: (await harness.gateway.tokens.create({ team: 'search' })).secret,
        baseURL: `${harness.gateway.url}/v1`,
        maxRetries: 0,
      });
      await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
      const primary = harness.gateway.credentials.get('openai-primary-with-a-rather-long-credential-name');
      expect(primary.last_error?.length ?? 0).toBeGreaterThan(150);

      const page = await signedInPage();
      await page.getByRole('navigation').getByRole('link', { name: 'Credentials', exact: true }).click();
      await page.getByRole('heading', { name: 'Credentials', level: 1 }).waitFor();
      const rows = page.locator('tr[data-credential-id]');
      await expect.poll(() => rows.count()).toBe(2);
      for (const row of await rows.all()) {
        const id = await row.getAttribute('data-credential-id');
        for (const button of await row.getByRole('button').all()) {
          const box = await button.boundingBox();
          expect(box, `${String(id)}: ${await button.textContent()}`).not.toBeNull();
          expect((box?.x ?? 0) + (box?.width ?? 0), `${String(id)}: ${await button.textContent()}`).toBeLessThanOrEqual(VIEWPORT.width);
          expect(box?.x ?? -1).toBeGreaterThanOrEqual(0);
        }
      }
      await page.screenshot({ path: join(screenshots, 'credentials-long-error.png'), fullPage: true });
      // The whole error is still there to read, on hover.
      const lastError = page.locator('tr[data-credential-id="openai-primary-with-a-rather-long-credential-name"] .last-error');
      expect(await lastError.getAttribute('title')).toBe(primary.last_error);
    },
    STEP_TIMEOUT,
  );

  it(
    'shows no upstream timing for a request the gateway refused itself',
    async () => {
      const client = new OpenAI({
        apiKey: (await harness.gateway.tokens.create({ team: 'search' })).secret,
        baseURL: `${harness.gateway.url}/v1`,
        maxRetries: 0,
      });
      const refused = await client.chat.completions
        .create({ model: 'no-such-model', messages: [{ role: 'user', content: 'Hi' }] })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.NotFoundError);
      const requestId = (refused as InstanceType<typeof OpenAI.NotFoundError>).headers?.get('x-request-id') as string;
      const page = await signedInPage();
      await page.goto(`${consoleUrl}requests/${requestId}`);
      const timing = page.getByRole('region', { name: 'Timing' });
      await expect.poll(async () => (await timing.textContent()) ?? '', { timeout: 10_000 }).toContain('Upstream first byte');
      expect(await timing.textContent()).toContain('none: no upstream was called');
    },
    STEP_TIMEOUT,
  );
});
