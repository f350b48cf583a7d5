import { spawnSync } from 'node:child_process';
import { Pool, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { OVERFLOW_LABEL_VALUE } from '../../src/observability/label-values.js';
import { parseExposition, total, type Sample } from '../support/prometheus-text.js';
import { startOpenAIFakeGateway, type OpenAIFakeGateway } from '../support/start-openai-fake-gateway.js';

const hi = [{ role: 'user', content: 'Say hi.' }];

/** `promtool` from Debian's prometheus package (`.ci/run` sets it); the check is skipped, and reported, without it. */
const PROMTOOL = process.env['TEST_PROMTOOL'] === undefined || process.env['TEST_PROMTOOL'] === '' ? null : process.env['TEST_PROMTOOL'];

async function scrape(url: string, token?: string): Promise<{ status: number; contentType: string; text: string }> {
  const answer = await request(`${url}/metrics`, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
  return { status: answer.statusCode, contentType: String(answer.headers['content-type']), text: await answer.body.text() };
}

async function samplesOf(harness: OpenAIFakeGateway, token: string): Promise<Sample[]> {
  const { status, text } = await scrape(harness.gateway.url, token);
  expect(status).toBe(200);
  return parseExposition(text);
}

async function chat(harness: OpenAIFakeGateway, token: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const answer = await request(`${harness.gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  await answer.body.text();
  return answer.statusCode;
}

describe('GET /metrics', () => {
  let harness: OpenAIFakeGateway;
  let metricsToken: string;

  beforeAll(async () => {
    harness = await startOpenAIFakeGateway({ config: { metrics: { listen: '127.0.0.1:0' } } });
    metricsToken = await harness.createToken({ team: 'ops', scopes: ['metrics'] });
  });
  afterAll(() => harness.close());

  it('answers 401 without a token and 403 to a token without the metrics scope; the metrics listener needs none', async () => {
    expect((await scrape(harness.gateway.url)).status).toBe(401);
    const refused = await scrape(harness.gateway.url, harness.token);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.text).error.code).toBe('insufficient_scope');
    const served = await scrape(harness.gateway.url, metricsToken);
    expect(served.status).toBe(200);
    expect(served.contentType).toContain('text/plain');
    expect(served.text).toContain('# TYPE switchyard_requests_total counter');
    // prom-client's process metrics come along.
    expect(served.text).toContain('process_cpu_user_seconds_total');
    const listener = harness.gateway.metricsUrl as string;
    expect(listener).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const unauthenticated = await scrape(listener);
    expect(unauthenticated.status).toBe(200);
    expect(unauthenticated.text).toContain('# TYPE switchyard_requests_total counter');
    expect((await request(`${listener}/health`)).statusCode).toBe(404);
  });

  it('counts a mixed run exactly as the request log does', async () => {
    const limited = await harness.createToken({ team: 'limited', limits: { rpm: 1 } });
    // Plain, streamed, failed over, refused by a limit, aborted by its client, and an unknown model.
    for (let index = 0; index < 3; index++) await harness.client.chat.completions.create({ model: 'gpt-4o-mini', messages: hi as never });
    for (let index = 0; index < 2; index++) {
      const stream = await harness.client.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: hi as never,
        stream: true,
        stream_options: { include_usage: true },
      });
      for await (const _chunk of stream);
    }
    harness.upstream.failNext({ status: 503 });
    await harness.client.chat.completions.create({ model: 'pooled-chat', messages: hi as never });
    expect(await chat(harness, limited, { model: 'gpt-4o-mini', messages: hi })).toBe(200);
    expect(await chat(harness, limited, { model: 'gpt-4o-mini', messages: hi })).toBe(429);
    expect(await chat(harness, harness.token, { model: 'no-such-model', messages: hi })).toBe(404);
    harness.upstream.options = { firstByteDelayMs: 400 };
    const aborted = new AbortController();
    const leaving = request(`${harness.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${harness.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: hi }),
      signal: aborted.signal,
    }).catch(() => null);
    setTimeout(() => aborted.abort(), 100);
    await leaving;
    await new Promise((resolve) => setTimeout(resolve, 500));
    harness.upstream.options = {};
    // A credential put in cooldown by its upstream's 429, and one disabled by an operator.
    harness.upstream.failNext({ status: 429, headers: { 'retry-after': '30' } });
    expect(await chat(harness, harness.token, { model: 'slow-chat', messages: hi })).toBe(429);
    harness.gateway.credentials.disable('unreachable');

    const rows = await vi.waitFor(
      async () => {
        const written = await harness.gateway.stores.requestLogs.query({ limit: 1000 });
        if (written.length < 11) throw new Error(`${written.length} rows so far`);
        return written;
      },
      { timeout: 5_000, interval: 50 },
    );
    const samples = await samplesOf(harness, metricsToken);
    expect(total(samples, 'switchyard_requests_total')).toBe(rows.length);
    const byLabels = new Map<string, number>();
    for (const row of rows) {
      const model = row.model === null ? '' : row.model === 'no-such-model' ? 'unknown' : row.model;
      const key = [row.endpoint, model, `${Math.floor(row.status / 100)}xx`, row.errorCode ?? '', row.team ?? ''].join('|');
      byLabels.set(key, (byLabels.get(key) ?? 0) + 1);
    }
    const counted = new Map<string, number>();
    for (const sample of samples.filter((item) => item.name === 'switchyard_requests_total')) {
      const { endpoint, model, status_class, error_code, team } = sample.labels;
      counted.set([endpoint, model, status_class, error_code, team].join('|'), sample.value);
    }
    expect(counted).toEqual(byLabels);
    expect([...counted.keys()]).toEqual(
      expect.arrayContaining([
        'chat.completions|gpt-4o-mini|4xx|rate_limit_exceeded|limited',
        'chat.completions|unknown|4xx|model_not_found|test',
        'chat.completions|gpt-4o-mini|4xx|client_closed_request|test',
      ]),
    );
    const sum = (pick: (row: (typeof rows)[number]) => number | null) => rows.reduce((all, row) => all + (pick(row) ?? 0), 0);
    expect(total(samples, 'switchyard_tokens_total', { kind: 'prompt' })).toBe(sum((row) => row.promptTokens));
    expect(total(samples, 'switchyard_tokens_total', { kind: 'completion' })).toBe(sum((row) => row.completionTokens));
    expect(total(samples, 'switchyard_tokens_total', { kind: 'prompt' })).toBeGreaterThan(0);
    const attempts = rows.flatMap((row) => row.attempts ?? []);
    expect(total(samples, 'switchyard_upstream_attempts_total')).toBe(attempts.length);
    expect(total(samples, 'switchyard_upstream_attempts_total', { credential: 'primary', model: 'pooled-chat', outcome: 'upstream_unavailable' })).toBe(
      attempts.filter((attempt) => attempt.credential === 'primary' && attempt.outcome === 'upstream_unavailable').length,
    );
    expect(total(samples, 'switchyard_upstream_attempts_total', { credential: 'backup', outcome: 'ok' })).toBe(1);
    const finishedWithTtfb = rows.filter((row) => row.ttfbMs !== null).length;
    expect(total(samples, 'switchyard_time_to_first_byte_seconds_count')).toBe(finishedWithTtfb);
    expect(total(samples, 'switchyard_request_duration_seconds_count')).toBe(rows.length);
    expect(total(samples, 'switchyard_session_affinity_total')).toBe(rows.filter((row) => row.affinity !== null).length);
    expect(total(samples, 'switchyard_request_log_queue_rows')).toBe(0);
    expect(total(samples, 'switchyard_limit_refusals_total')).toBe(1);
    expect(total(samples, 'switchyard_limit_refusals_total', { holder_kind: 'token', limit: 'rpm' })).toBe(1);
    // The credentials' gauges say what the admin API says.
    const credentials = harness.gateway.credentials.list();
    expect(credentials.find((credential) => credential.id === 'slow')?.state).toBe('cooling');
    expect(credentials.find((credential) => credential.id === 'unreachable')?.state).toBe('disabled');
    for (const credential of credentials) {
      expect(total(samples, 'switchyard_credential_state', { credential: credential.id })).toBe(1);
      expect(total(samples, 'switchyard_credential_state', { credential: credential.id, state: credential.state })).toBe(1);
      expect(total(samples, 'switchyard_credential_in_flight', { credential: credential.id })).toBe(credential.in_flight);
      expect(total(samples, 'switchyard_credential_cooldown_seconds', { credential: credential.id }) > 0).toBe(credential.state === 'cooling');
    }
    // Labels never carry a token, session or request id.
    for (const sample of samples) for (const value of Object.values(sample.labels)) expect(value).not.toMatch(/^(svc_|tok_|req_|inf_)/);
  });

  it('shows a stream under way as active and in flight, and neither once it ended', async () => {
    harness.upstream.options = { chunkDelayMs: 40, splitBytes: false };
    const stream = await request(`${harness.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${harness.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: hi, stream: true }),
    });
    const during = await samplesOf(harness, metricsToken);
    expect(total(during, 'switchyard_streams_active', { endpoint: 'chat.completions' })).toBe(1);
    expect(total(during, 'switchyard_requests_in_flight', { endpoint: 'chat.completions' })).toBe(1);
    await stream.body.text();
    harness.upstream.options = {};
    await vi.waitFor(async () => {
      const after = await samplesOf(harness, metricsToken);
      expect(total(after, 'switchyard_streams_active')).toBe(0);
      expect(total(after, 'switchyard_requests_in_flight', { endpoint: 'chat.completions' })).toBe(0);
    });
  });

  it("shows a team's and a project's quota as the share spent, as the request log counts it", async () => {
    await harness.gateway.teams.createTeam({ id: 'quota-team', limits: { tokensPerDay: 10_000 } });
    await harness.gateway.teams.createProject('quota-team', { id: 'ranker', limits: { usdPerMonth: 5, rpm: 100 } });
    const token = await harness.createToken({ team: 'quota-team', project: 'ranker' });
    expect(await chat(harness, token, { model: 'gpt-4o-mini', messages: hi })).toBe(200);
    const spent = await vi.waitFor(async () => {
      const rows = (await harness.gateway.stores.requestLogs.query({ limit: 1000 })).filter((row) => row.team === 'quota-team');
      expect(rows).toHaveLength(1);
      return rows.reduce((all, row) => all + (row.promptTokens ?? 0) + (row.completionTokens ?? 0), 0);
    });
    expect(spent).toBeGreaterThan(0);
    await harness.gateway.limits.drain();
    const samples = await samplesOf(harness, metricsToken);
    expect(total(samples, 'switchyard_quota_used_ratio', { holder_kind: 'team', holder: 'quota-team', limit: 'tokens_per_day' })).toBeCloseTo(
      spent / 10_000,
      6,
    );
    // The project's quota is in dollars; the model has no price, so nothing is spent. Its rate limit is no quota.
    expect(total(samples, 'switchyard_quota_used_ratio', { holder_kind: 'project', holder: 'quota-team/ranker', limit: 'usd_per_month' })).toBe(0);
    expect(samples.filter((sample) => sample.name === 'switchyard_quota_used_ratio' && sample.labels['limit'] === 'rpm')).toEqual([]);
  });

  it.skipIf(PROMTOOL === null)("passes promtool's checks, but for the names of prom-client's own default metrics", async () => {
    const { text } = await scrape(harness.gateway.url, metricsToken);
    const checked = spawnSync(PROMTOOL as string, ['check', 'metrics'], { input: text, encoding: 'utf8' });
    const problems = `${checked.stdout}${checked.stderr}`.split('\n').filter((line) => line.trim() !== '');
    expect(problems.filter((line) => !line.startsWith('nodejs_'))).toEqual([]);
  });
});

describe('bounded cardinality', () => {
  it('keeps the series under a bound when callers send 20,000 different models, sessions and request ids', async () => {
    const harness = await startOpenAIFakeGateway();
    const metricsToken = await harness.createToken({ team: 'ops', scopes: ['metrics'] });
    const pool = new Pool(harness.gateway.url, { connections: 32 });
    const send = async (index: number) => {
      const answer = await pool.request({
        path: '/v1/chat/completions',
        method: 'POST',
        headers: {
          authorization: `Bearer ${harness.token}`,
          'content-type': 'application/json',
          'x-session-id': `session-${index}`,
          'x-request-id': `client-request-${index}`,
        },
        body: JSON.stringify({ model: `caller-model-${index}`, messages: hi }),
      });
      await answer.body.text();
      expect(answer.statusCode).toBe(404);
    };
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < 20_000) await send(next++);
      }),
    );
    // And some served ones, on every configured model route the harness has for chat.
    await harness.client.chat.completions.create({ model: 'gpt-4o-mini', messages: hi as never });
    const samples = await samplesOf(harness, metricsToken);
    const ours = samples.filter((sample) => sample.name.startsWith('switchyard_'));
    // docs/metrics.md: with one team and a handful of models a gateway stays under a few hundred series.
    expect(ours.length).toBeLessThan(300);
    expect(total(samples, 'switchyard_requests_total', { model: 'unknown', error_code: 'model_not_found' })).toBe(20_000);
    const values = new Set(ours.flatMap((sample) => Object.values(sample.labels)));
    for (const value of values) expect(value).not.toMatch(/caller-model-|session-|client-request-/);
    await pool.close();
    await harness.close();
  }, 120_000);

  it('counts a label past metrics.max_label_values under "other", and warns once', async () => {
    const logLines: Array<Record<string, unknown>> = [];
    const harness = await startOpenAIFakeGateway({ config: { metrics: { max_label_values: 3 }, logging: { level: 'info', access: false } }, logLines });
    const metricsToken = await harness.createToken({ team: 'ops', scopes: ['metrics'] });
    for (const team of ['t1', 't2', 't3', 't4', 't5']) {
      const token = await harness.createToken({ team });
      expect(await chat(harness, token, { model: 'gpt-4o-mini', messages: hi })).toBe(200);
    }
    const samples = await samplesOf(harness, metricsToken);
    const teams = samples.filter((sample) => sample.name === 'switchyard_requests_total').map((sample) => sample.labels['team']);
    expect(teams.sort()).toEqual(['other', 't1', 't2', 't3'].sort());
    expect(total(samples, 'switchyard_requests_total', { team: OVERFLOW_LABEL_VALUE })).toBe(2);
    const warnings = logLines.filter((line) => line['msg'] === 'a metric label reached metrics.max_label_values; its new values are counted under "other"');
    // Once per metric and label: the requests' counter, and the tokens' and cost's that carry a team.
    expect(warnings.filter((line) => line['metric'] === 'switchyard_requests_total')).toEqual([
      expect.objectContaining({ metric: 'switchyard_requests_total', label: 'team', cap: 3 }),
    ]);
    await harness.close();
  });

  it('is gone with metrics.enabled: false', async () => {
    const harness = await startOpenAIFakeGateway({ config: { metrics: { enabled: false, listen: '127.0.0.1:0' } } });
    const metricsToken = await harness.createToken({ team: 'ops', scopes: ['metrics'] });
    const answer = await scrape(harness.gateway.url, metricsToken);
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.text).error.code).toBe('route_not_found');
    expect(harness.gateway.metricsUrl).toBeNull();
    await harness.close();
  });
});
