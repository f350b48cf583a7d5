import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeChatGpt, type FakeChatGpt } from '../fake-upstreams/chatgpt-upstream.js';
import { runCodex, writeCodexConfig, type CodexRun } from '../support/codex-cli.js';
import { startRecordingProxy, type RecordingProxy } from '../support/recording-proxy.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

/**
 * The real Codex CLI (`@openai/codex`, a devDependency) through the gateway over a pool of two
 * ChatGPT accounts (the fake backend): a first turn, a resumed second turn after account A hits
 * its usage limit (the session moves to B), and Codex's own usage-limit message once both are
 * limited. A recording relay between Codex and the gateway shows that the backend received the
 * bytes Codex sent and Codex received the bytes the backend sent.
 */
const MODEL = 'gpt-5.1-codex';

let backend: FakeChatGpt;
let running: TestGateway;
let relay: RecordingProxy;
let home: string;
let workdir: string;
let token: string;

function codex(args: string[]): Promise<CodexRun> {
  return runCodex(args, { home, workdir, token });
}

beforeAll(async () => {
  backend = await startFakeChatGpt();
  backend.addAccount({ accountId: 'acct-a', planType: 'plus' });
  backend.addAccount({ accountId: 'acct-b', planType: 'plus' });
  const directory = mkdtempSync(join(tmpdir(), 'switchyard-codex-cli-'));
  for (const account of ['a', 'b']) writeFileSync(join(directory, `${account}.json`), backend.authJson(`acct-${account}`), { mode: 0o600 });
  running = await startTestGateway({
    upstreams: ['a', 'b'].map((account) => ({
      id: `chatgpt-${account}`,
      provider: 'codex',
      base_url: backend.baseUrl,
      token_url: backend.tokenUrl,
      auth_file: join(directory, `${account}.json`),
    })),
    models: [
      {
        id: MODEL,
        type: 'chat',
        strategy: 'ordered',
        routes: [
          { upstream: 'chatgpt-a', model: MODEL, priority: 0 },
          { upstream: 'chatgpt-b', model: MODEL, priority: 1 },
        ],
      },
    ],
    request_log: { flush_interval_ms: 20 },
  });
  token = (await running.gateway.tokens.create({ team: 'codex-users', scopes: ['native'] })).secret;
  relay = await startRecordingProxy(running.gateway.url);
  home = join(directory, 'home');
  workdir = join(directory, 'work');
  mkdirSync(workdir);
  writeCodexConfig(home, MODEL, `${relay.url}/v1/native`);
});

afterAll(async () => {
  await relay?.close();
  await running?.close();
  await backend?.close();
});

describe('Codex CLI through the native passthrough', () => {
  it('completes a turn and a resumed turn across a usage limit, byte for byte, and prints the limit when both accounts are out', async () => {
    backend.reply = () => ({ kind: 'text', text: 'First answer from the fake backend.' });
    const first = await codex(['exec', '--skip-git-repo-check', 'Say hello']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('First answer from the fake backend.');
    expect(backend.requests.map((request) => request.accountId)).toEqual(['acct-a']);

    // A runs out; the resumed conversation moves to B and goes on.
    backend.usageLimit('acct-a', Math.floor(Date.now() / 1000) + 3_600);
    backend.reply = () => ({ kind: 'text', text: 'Second answer, from the other account.' });
    const second = await codex(['exec', '--skip-git-repo-check', 'resume', '--last', 'Say it again']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('Second answer, from the other account.');
    expect(backend.requests.map((request) => request.accountId)).toEqual(['acct-a', 'acct-a', 'acct-b']);

    // One conversation: the same session id and prompt_cache_key on every turn, the second
    // resending the first turn's history.
    const [firstTurn, , secondTurn] = backend.requests;
    expect(secondTurn?.headers['session-id']).toBe(firstTurn?.headers['session-id']);
    expect((secondTurn?.body as { prompt_cache_key: string }).prompt_cache_key).toBe((firstTurn?.body as { prompt_cache_key: string }).prompt_cache_key);
    expect(JSON.stringify(secondTurn?.body)).toContain('First answer from the fake backend.');

    // Byte for byte: each successful exchange as Codex saw it is what the backend saw.
    const succeeded = relay.exchanges.filter((exchange) => exchange.status === 200);
    expect(succeeded).toHaveLength(2);
    const served = backend.requests.filter((_, index) => index !== 1);
    for (const [index, exchange] of succeeded.entries()) {
      expect(exchange.requestBody.equals(served[index]?.rawBody as Buffer), `request ${index}`).toBe(true);
      expect(exchange.responseBody.equals(backend.sentBodies[index] as Buffer), `response ${index}`).toBe(true);
      expect(exchange.responseHeaders['x-codex-turn-state']).toBeDefined();
      expect(exchange.responseHeaders['x-session-source']).toBe('native');
    }
    expect(succeeded[1]?.responseHeaders['x-session-affinity']).toBe('moved');

    // Both out: Codex says so, with the time to try again, and does not retry.
    const resetB = Math.floor(Date.now() / 1000) + 7_200;
    backend.usageLimit('acct-b', resetB);
    const requestsBefore = backend.requests.length;
    const third = await codex(['exec', '--skip-git-repo-check', 'resume', '--last', 'And once more']);
    expect(third.code).not.toBe(0);
    expect(`${third.stdout}\n${third.stderr}`).toMatch(/usage limit/i);
    expect(`${third.stdout}\n${third.stderr}`).toMatch(/try again at/i);
    // The gateway learns of B's limit from B's own 429 (A is not asked again before its reset), and
    // Codex does not retry a usage limit.
    expect(backend.requests.slice(requestsBefore).map((request) => request.accountId)).toEqual(['acct-b']);

    // The request log has usage for every served turn.
    let rows = await running.gateway.stores.requestLogs.query({ limit: 10 });
    for (let tries = 0; tries < 50 && rows.length < 3; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      rows = await running.gateway.stores.requestLogs.query({ limit: 10 });
    }
    const servedRows = rows.filter((row) => row.status === 200);
    expect(servedRows).toHaveLength(2);
    for (const row of servedRows) {
      expect(row.endpoint).toBe('native.responses');
      expect(row.promptTokens).toBeGreaterThan(0);
      expect(row.completionTokens).toBeGreaterThan(0);
      expect(row.sessionSource).toBe('native');
    }
    expect(rows.find((row) => row.status === 429)?.errorCode).toBe('upstream_quota_exhausted');
  }, 120_000);
});
