import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tailRequestsCommand } from '../../src/cli/requests-command.js';
import { cli } from '../support/run-cli.js';
import { startOpenAIFakeGateway, type OpenAIFakeGateway } from '../support/start-openai-fake-gateway.js';

async function until<T>(probe: () => T | undefined, what: string): Promise<T> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('switchyard requests, reading the log of a running gateway', () => {
  let harness: OpenAIFakeGateway;
  let token: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    harness = await startOpenAIFakeGateway();
    token = await harness.createToken({ team: 'search' });
    const client = harness.clientFor(token);
    const chat = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }, { headers: { 'x-session-id': 'conversation-7' } })
      .withResponse();
    ids['chat'] = chat.response.headers.get('x-request-id') as string;
    const missing = await fetch(`${harness.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'no-such-model', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(missing.status).toBe(404);
    ids['missing'] = missing.headers.get('x-request-id') as string;
    await harness.logRow(ids['chat'] as string);
    await harness.logRow(ids['missing'] as string);
  });
  afterAll(async () => {
    await harness.close();
  });

  it('lists the newest first, with what an operator looks for and never the secret', async () => {
    const listed = await cli('requests', 'list', '--config', harness.configPath);
    expect(listed.code).toBe(0);
    expect(listed.stderr[0]).toMatch(/^database: sqlite:.*switchyard\.db \(config: .*switchyard\.yaml\)$/);
    const [header, first, second] = listed.stdout;
    expect(header).toMatch(/^TIME +REQUEST +STATUS +ENDPOINT +MODEL +TEAM +TOKEN +SESSION +UPSTREAM +LATENCY +TTFB +TOKENS +ERROR$/);
    expect(first).toContain(ids['missing']);
    // The model the request named is kept, known or not (a model filter finds the refusal); no upstream was called, so no first byte.
    expect(first).toMatch(/ 404 +chat\.completions +no-such-model +search .* +- +[\d.]+ms +- +- +model_not_found$/);
    expect(second).toContain(ids['chat']);
    expect(second).toMatch(/ 200 .*gpt-4o-mini .*search .*tok_\S+ +conversation-7 +primary +[\d.]+ms +[\d.]+ms +\d+\/\d+ +-$/);
    expect(listed.stdout.join('\n')).not.toContain(token);
  });

  it('filters by session, by status or status class, and limits', async () => {
    const session = await cli('requests', 'list', '--session', 'conversation-7', '--json', '--config', harness.configPath);
    const rows = JSON.parse(session.stdout.join('\n')) as Array<Record<string, unknown>>;
    expect(rows.map((row) => row['id'])).toEqual([ids['chat']]);
    expect(rows[0]).toMatchObject({ status: 200, model: 'gpt-4o-mini', team: 'search', session_id: 'conversation-7', upstream: 'primary', error_code: null });

    const notFound = await cli('requests', 'list', '--status', '4xx', '--json', '--config', harness.configPath);
    expect((JSON.parse(notFound.stdout.join('\n')) as Array<{ id: string }>).map((row) => row.id)).toEqual([ids['missing']]);
    const exact = await cli('requests', 'list', '--status', '200', '--json', '--config', harness.configPath);
    expect((JSON.parse(exact.stdout.join('\n')) as Array<{ id: string }>).map((row) => row.id)).toEqual([ids['chat']]);
    const limited = await cli('requests', 'list', '--limit', '1', '--json', '--config', harness.configPath);
    expect((JSON.parse(limited.stdout.join('\n')) as Array<{ id: string }>).map((row) => row.id)).toEqual([ids['missing']]);
    const none = await cli('requests', 'list', '--status', '503', '--config', harness.configPath);
    expect(none.stdout).toHaveLength(1);
    expect(none.stderr.at(-1)).toBe('no requests match');
  });

  it('filters by team, model and time, as the admin API does', async () => {
    const list = async (...flags: string[]) => {
      const run = await cli('requests', 'list', ...flags, '--json', '--config', harness.configPath);
      expect(run.code).toBe(0);
      return (JSON.parse(run.stdout.join('\n')) as Array<{ id: string }>).map((row) => row.id);
    };
    expect(await list('--team', 'search', '--model', 'gpt-4o-mini')).toEqual([ids['chat']]);
    expect(await list('--team', 'nobody')).toEqual([]);
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    expect(await list('--from', hourAgo)).toEqual([ids['missing'], ids['chat']]);
    expect(await list('--to', hourAgo)).toEqual([]);
    const bad = await cli('requests', 'list', '--from', 'yesterday', '--config', harness.configPath);
    expect(bad.code).toBe(64);
    expect(bad.stderr.at(-1)).toMatch(/^switchyard: from: /);
  });

  it('refuses a status or limit it cannot read, naming what it expects', async () => {
    const status = await cli('requests', 'list', '--status', 'bad', '--config', harness.configPath);
    expect(status.code).toBe(64);
    expect(status.stderr.at(-1)).toBe('switchyard: --status: expected a status such as 429 or a class such as 5xx, got "bad"');
    const limit = await cli('requests', 'list', '--limit', '0', '--config', harness.configPath);
    expect(limit.code).toBe(64);
    expect(limit.stderr.at(-1)).toMatch(/--limit: expected a whole number/);
  });

  it('tails: the last lines, then each request as it is logged, until stopped', async () => {
    const stdout: string[] = [];
    const controller = new AbortController();
    const tailing = tailRequestsCommand(
      { config: harness.configPath, lines: '1', interval: '50' },
      { stdout: (line) => stdout.push(line), stderr: () => undefined },
      controller.signal,
    );
    await until(() => (stdout.length > 0 ? true : undefined), 'the backlog line');
    expect(stdout).toHaveLength(1);
    expect(stdout[0]).toMatch(
      new RegExp(`^\\S+Z ${ids['missing']} 404 chat\\.completions model=no-such-model team=search token=tok_\\S+ latency_ms=[\\d.]+ error=model_not_found$`),
    );

    const client = harness.clientFor(token);
    const next = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Again' }] }, { headers: { 'x-session-id': 'conversation-8' } })
      .withResponse();
    const nextId = next.response.headers.get('x-request-id') as string;
    const line = await until(() => stdout.find((candidate) => candidate.includes(nextId)), 'the new request');
    expect(line).toMatch(
      / 200 chat\.completions model=gpt-4o-mini team=search token=tok_\S+ session=conversation-8 upstream=primary latency_ms=[\d.]+ ttfb_ms=[\d.]+ tokens=\d+\/\d+$/,
    );
    controller.abort();
    expect(await tailing).toBe(0);
    expect(stdout.filter((candidate) => candidate.includes(nextId))).toHaveLength(1);
  });
});
