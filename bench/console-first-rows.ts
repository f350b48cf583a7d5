import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { builtQueries, openBuiltStores, option, say } from './request-log-bench-db.js';

/**
 * How soon the console's Requests page shows its first rows on a large request log (issue 20: within
 * 1 s on 1,000,000 rows), in Debian's chromium, against the built gateway (`npm run build`):
 *
 *   node dist-bench/seed-request-log.js --database sqlite:/tmp/request-log.db      # once
 *   node dist-bench/console-first-rows.js --database sqlite:/tmp/request-log.db [--runs 7]
 *
 * Each run opens the page in a fresh browser context (empty cache, the session cookie only) and
 * times from navigation to the first `tr[data-request-id]` in the DOM: the page, its JavaScript,
 * the session check and the first admin API page, rendered. Unfiltered, and filtered by a session
 * id, a team and the rarest model, as links to `/console/requests?…` open them. Also prints the
 * console's JavaScript, gzipped, against its 300 KB budget.
 */

const root = resolve(import.meta.dirname, '..');
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];

async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

/** What the build's `.gz` files of the console's JavaScript weigh (scripts/compress-web.js writes them). */
function javascriptGzipBytes(): number {
  const assets = join(root, 'dist', 'web', 'assets');
  return readdirSync(assets)
    .filter((name) => name.endsWith('.js.gz'))
    .reduce((total, name) => total + statSync(join(assets, name)).size, 0);
}

async function waitForHealth(url: string, child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    if (child.exitCode !== null) throw new Error(`the gateway exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error('the gateway did not start within 60 s');
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const database = option(argv, 'database') ?? 'sqlite:/tmp/request-log.db';
  const runs = Number(option(argv, 'runs') ?? 7);
  const chromiumPath = option(argv, 'chromium') ?? process.env['TEST_CHROMIUM'] ?? '/usr/bin/chromium';

  // Filters taken from the log itself: a row a week before the newest gives a session and a team.
  const stores = await openBuiltStores(database);
  const total = await stores.requestLogs.count();
  const queries = await builtQueries(stores);
  const recent = (await queries.list({ limit: 1_000, to: new Date(Date.now() - 7 * 86_400_000).toISOString() })).data as Array<{
    id: string;
    session_id: string | null;
    team: string | null;
  }>;
  await stores.close();
  const withSession = recent.find((row) => row.session_id !== null);
  if (total === 0 || withSession === undefined) throw new Error(`${database} has no requests: run seed-request-log first`);
  say(`request log: ${total.toLocaleString('en')} rows`);

  const directory = mkdtempSync(join(tmpdir(), 'switchyard-console-bench-'));
  const port = await freePort();
  const configPath = join(directory, 'switchyard.yaml');
  writeFileSync(
    configPath,
    `server: { host: 127.0.0.1, port: ${port} }\ndatabase: { url: "${database}" }\nlogging: { level: warn }\nupstreams: []\nmodels: []\n`,
  );
  const created = spawnSync(
    process.execPath,
    [join(root, 'bin', 'switchyard.js'), 'tokens', 'create', '--config', configPath, '--team', 'bench', '--scopes', 'admin'],
    { encoding: 'utf8' },
  );
  if (created.status !== 0) throw new Error(`tokens create failed: ${created.stderr}`);
  const adminToken = created.stdout.trim().split('\n').at(-1) as string;
  const gateway = spawn(process.execPath, [join(root, 'bin', 'switchyard.js'), 'serve', '--config', configPath], { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  let browser: Browser | null = null;
  try {
    await waitForHealth(url, gateway);
    browser = await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_FLAGS });
    const signedIn = await browser.newContext();
    const signIn = await signedIn.newPage();
    await signIn.goto(`${url}/console/`);
    await signIn.getByLabel('Admin token').fill(adminToken);
    await signIn.getByRole('button', { name: 'Sign in' }).click();
    await signIn.getByRole('heading', { name: 'Requests', level: 1 }).waitFor();
    const storage = await signedIn.storageState();
    await signedIn.close();

    const cases: Array<[string, string]> = [
      ['newest (no filter)', ''],
      ['one session', `?session_id=${encodeURIComponent(withSession.session_id as string)}`],
      ['one team', `?team=${encodeURIComponent(withSession.team ?? '')}`],
      ['rarest model', '?model=legacy-davinci'],
    ];
    const lines = ['| Requests page, fresh browser context | median | worst | runs |', '|---|---|---|---|'];
    for (const [name, query] of cases) {
      const times: number[] = [];
      for (let run = 0; run < runs + 1; run++) {
        const context: BrowserContext = await browser.newContext({ storageState: storage, viewport: { width: 1280, height: 800 } });
        const page = await context.newPage();
        const started = performance.now();
        await page.goto(`${url}/console/requests${query}`);
        await page.locator('tr[data-request-id]').first().waitFor({ timeout: 30_000 });
        const elapsed = performance.now() - started;
        // The first run warms the gateway's and the database's caches: not counted.
        if (run > 0) times.push(elapsed);
        await context.close();
      }
      lines.push(`| ${name} | ${median(times).toFixed(0)} ms | ${Math.max(...times).toFixed(0)} ms | ${times.length} |`);
    }
    const javascript = javascriptGzipBytes();
    const size = statSync(join(root, 'dist', 'web', 'index.html')).size;
    process.stdout.write(`${lines.join('\n')}\n\nconsole JavaScript: ${(javascript / 1024).toFixed(1)} KB gzipped (budget 300 KB); index.html ${size} bytes\n`);
  } finally {
    await browser?.close();
    gateway.kill('SIGTERM');
    await new Promise((done) => gateway.once('exit', done));
    rmSync(directory, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
