import { statSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { builtQueries, option, prepareDatabase, say, type BuiltQueries, type SeedRow } from './request-log-bench-db.js';
import { percentile, seededRandom, timedRuns } from './timed-runs.js';

/**
 * The request log at size (docs/request-log-retention.md): fills a log to `--rows` rows with fast
 * bulk generation (generate_series on PostgreSQL, one prepared statement in transactions of 100,000
 * rows on SQLite), `--expired` of them older than the retention, then measures, on the built
 * gateway (`npm run build` first):
 *
 * - the per-row cost of the store's `insertBatch` (batches of 100, as the gateway's queue writes
 *   them) on the empty log and at size;
 * - the admin API's and the console's request-log queries (list pages, a request, a session,
 *   usage charts, the token list's last use, a quota rebuild), median / p90 / max of `--runs`;
 * - a retention pass over the expired rows: its length, and the event loop's delay meanwhile
 *   (`monitorEventLoopDelay`), with a batch of 100 rows inserted every `--writer-interval-ms`
 *   (200, the queue's flush interval; 0: none) as the queue would.
 *
 *   node dist-bench/request-log-at-size.js --database sqlite:/tmp/at-size.db --rows 10000000
 *   node dist-bench/request-log-at-size.js --database postgres://postgres@127.0.0.1:5432/bench_at_size --rows 10000000
 *
 * The database must be new (PostgreSQL: created when missing); `--measure-only` measures inserts
 * and queries again on a log an earlier run filled; `--no-pass` leaves the expired rows, and
 * `--pass-only` runs the retention pass alone on such a log (or a copy: the same pass, A/B, for two
 * builds). Prints a Markdown report on stdout.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const TOKENS = 2_000;
const TEAMS = 200;
const MODELS = [
  'gpt-4o-mini',
  'gpt-4o',
  'claude-sonnet',
  'text-embedding-3-small',
  'gpt-5-codex',
  'gemini-flash',
  'llama-70b',
  'o3',
  'bge-reranker',
  'whisper-1',
  'tts-1',
  'legacy-davinci',
];
const FILL_CHUNK = 100_000;

interface Pass {
  skipped: string | null;
  rowsDeleted: number;
  partitionsDropped: Array<{ name: string; rows: number }>;
  partitionsCreated: string[];
  partitionsDeferred: Array<{ name: string; reason: string }>;
  pagesFreed: number;
  complete: boolean;
  durationMs: number;
}

interface Stores {
  database: {
    dialect: 'sqlite' | 'postgres';
    sqlite: {
      exec(sql: string): unknown;
      pragma(sql: string, options?: { simple: boolean }): unknown;
      prepare(sql: string): { run(...values: unknown[]): unknown };
      transaction<T extends (...args: never[]) => unknown>(fn: T): T;
    } | null;
  };
  requestLogs: { insertBatch(rows: readonly SeedRow[]): Promise<void>; count(): Promise<number> };
  requestSearch: {
    lastUsed(ids: readonly string[]): Promise<Map<string, number>>;
    spent(filter: Record<string, unknown>): Promise<{ tokens: number; usd: number }>;
  };
  close(): Promise<void>;
}

interface StoreModule {
  openStores(url: string): Promise<Stores>;
  requestLogRetention(
    database: Stores['database'],
    options: { retentionMs: number | null; onBatch?: (step: 'delete' | 'vacuum', size: number, ms: number) => void },
  ): { prune(): Promise<Pass> };
}

interface PartitionsModule {
  addDayPartition(
    run: (text: string, parameters?: readonly unknown[]) => Promise<Array<Record<string, unknown>>>,
    day: number,
    hasDefault: boolean,
  ): Promise<number>;
  listPartitions(
    run: (text: string, parameters?: readonly unknown[]) => Promise<Array<Record<string, unknown>>>,
  ): Promise<Array<{ from: number | null; to: number | null; isDefault: boolean }>>;
  missingDays(partitions: ReadonlyArray<{ from: number | null; to: number | null; isDefault: boolean }>, first: number, last: number): number[];
}

interface RollupModule {
  usageGroupKeySql(): string;
}

interface SummaryModule {
  MARK_EVERY_ROLLUP_HOUR: string;
  usageSummarizer(database: Stores['database']): { run(now: number): Promise<{ hours: number; skipped: string | null }> };
}

const root = resolve(import.meta.dirname, '..');
const built = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(root, 'dist', path)).href)) as T;

/** Rows as the gateway writes them (through `insertBatch`): busy tokens and quiet ones, sessions, a few errors. */
class Traffic {
  private readonly next = seededRandom(7);
  private serial = 0;

  row(createdAt: number): SeedRow {
    this.serial += 1;
    const token = Math.floor(TOKENS * this.next() ** 2);
    const team = token % TEAMS;
    const failed = this.next() < 0.04;
    const prompt = 50 + Math.floor(this.next() ** 2 * 8_000);
    const completion = 10 + Math.floor(this.next() ** 2 * 2_000);
    const model = MODELS[Math.floor(this.next() ** 1.5 * MODELS.length)] as string;
    return {
      id: `req_${createdAt.toString(16).padStart(12, '0')}a${this.serial.toString(16).padStart(19, '0')}`,
      clientRequestId: null,
      createdAt,
      tokenId: `tok_${token.toString(16).padStart(6, '0')}`,
      team: `team-${team}`,
      project: team % 4 === 0 ? null : `project-${token % 3}`,
      endpoint: 'chat.completions',
      model,
      upstream: `cred-${this.serial % 24}`,
      upstreamModel: model,
      sessionId: this.next() < 0.6 ? `conv-${Math.floor(this.serial / 20).toString(16)}` : null,
      status: failed ? 502 : 200,
      latencyMs: 80 + this.next() * 5_000,
      ttfbMs: 40,
      promptTokens: failed ? null : prompt,
      completionTokens: failed ? null : completion,
      cachedTokens: null,
      reasoningTokens: null,
      costUsd: failed ? null : (prompt * 0.15 + completion * 0.6) / 1_000_000,
      usageSource: failed ? 'none' : 'upstream',
      errorCode: failed ? 'upstream_error' : null,
      sessionSource: null,
      affinity: null,
      attempts: [{ credential: `cred-${this.serial % 24}`, outcome: failed ? 'upstream_error' : 'ok', status: failed ? 500 : 200, ms: 120 }],
    };
  }
}

/** µs per row of `insertBatch`, batches of 100 rows as the queue writes them (median and mean of the batches). */
async function insertCost(stores: Stores, traffic: Traffic, batches: number): Promise<{ median: number; mean: number }> {
  const perRow: number[] = [];
  for (let batch = 0; batch < batches; batch++) {
    const now = Date.now();
    const rows = Array.from({ length: 100 }, (_, index) => traffic.row(now - 1_000 + index));
    const began = performance.now();
    await stores.requestLogs.insertBatch(rows);
    perRow.push(((performance.now() - began) * 1_000) / rows.length);
    // As the queue: one batch, then the event loop (and, every few batches, a pause).
    if (batch % 10 === 9) await sleep(5);
  }
  perRow.sort((a, b) => a - b);
  return { median: percentile(perRow, 0.5), mean: perRow.reduce((sum, value) => sum + value, 0) / perRow.length };
}

/** SQLite: one prepared statement, transactions of `FILL_CHUNK` rows, the rollup summed in SQL at the end. */
async function fillSqlite(stores: Stores, plan: FillPlan, rollupKey: string): Promise<void> {
  const sqlite = stores.database.sqlite;
  if (sqlite === null) throw new Error('not SQLite');
  sqlite.pragma('cache_size = -1000000');
  const columns = [
    'id',
    'created_at',
    'token_id',
    'team',
    'project',
    'endpoint',
    'model',
    'upstream',
    'upstream_model',
    'session_id',
    'status',
    'latency_ms',
    'ttfb_ms',
    'prompt_tokens',
    'completion_tokens',
    'usage_source',
    'error_code',
    'logged_at',
    'attempts',
    'cost_usd',
  ];
  const statement = sqlite.prepare(`insert into request_logs (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`);
  const traffic = new Traffic();
  const chunk = sqlite.transaction((first: number, count: number) => {
    for (let index = first; index < first + count; index++) {
      const row = traffic.row(plan.timeOf(index));
      statement.run(
        `req_${row.createdAt.toString(16).padStart(12, '0')}b${index.toString(16).padStart(19, '0')}`,
        row.createdAt,
        row.tokenId,
        row.team,
        row.project,
        row.endpoint,
        row.model,
        row.upstream,
        row.upstreamModel,
        row.sessionId,
        row.status,
        row.latencyMs,
        row.ttfbMs,
        row.promptTokens,
        row.completionTokens,
        row.usageSource,
        row.errorCode,
        row.createdAt + 100,
        JSON.stringify(row.attempts),
        row.costUsd,
      );
    }
  });
  const began = performance.now();
  for (let first = 0; first < plan.rows; first += FILL_CHUNK) {
    chunk(first, Math.min(FILL_CHUNK, plan.rows - first));
    if ((first / FILL_CHUNK) % 10 === 0) say(`  ${(first + FILL_CHUNK).toLocaleString('en')} rows, ${((performance.now() - began) / 1000).toFixed(0)} s`);
  }
  say(`  rollup of the bulk rows`);
  sqlite.exec(rollupFill(rollupKey, "id >= 'req_' and substr(id, 17, 1) = 'b'"));
  // Their hours marked for the usage summary, as the batch insert marks them (and the migration does on an upgrade).
  sqlite.exec((await built<SummaryModule>('store/request-usage-summary.js')).MARK_EVERY_ROLLUP_HOUR);
}

/** The bulk rows' usage added to the rollup, as the batch insert would have (the migration's backfill SQL, merged). */
function rollupFill(key: string, where: string): string {
  const hour = '(created_at / 3600000) * 3600000';
  return `insert into request_usage_hourly (hour_start, group_key, token_id, team, project, model, requests, errors,
      prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens, cost_usd)
    select ${hour}, ${key}, token_id, team, project, model, count(*), sum(case when status >= 400 then 1 else 0 end),
      coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0), coalesce(sum(cached_tokens), 0), coalesce(sum(reasoning_tokens), 0), sum(cost_usd)
    from request_logs where ${where}
    group by ${hour}, token_id, team, project, model
    on conflict (hour_start, group_key) do update set
      requests = request_usage_hourly.requests + excluded.requests, errors = request_usage_hourly.errors + excluded.errors,
      prompt_tokens = request_usage_hourly.prompt_tokens + excluded.prompt_tokens,
      completion_tokens = request_usage_hourly.completion_tokens + excluded.completion_tokens,
      cached_tokens = request_usage_hourly.cached_tokens + excluded.cached_tokens,
      reasoning_tokens = request_usage_hourly.reasoning_tokens + excluded.reasoning_tokens,
      cost_usd = coalesce(request_usage_hourly.cost_usd + excluded.cost_usd, request_usage_hourly.cost_usd, excluded.cost_usd)`;
}

/** PostgreSQL: the days' partitions first (as daily maintenance would have made them), then generate_series, a million rows a statement. */
async function fillPostgres(url: string, plan: FillPlan, rollupKey: string): Promise<void> {
  const partitions = await built<PartitionsModule>('store/request-log-partitions.js');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const run = async (text: string, parameters: readonly unknown[] = []) => (await client.query(text, [...parameters])).rows as Array<Record<string, unknown>>;
  try {
    const existing = await partitions.listPartitions(run);
    const days = partitions.missingDays(existing, Math.floor(plan.start / DAY) * DAY, Math.floor(Date.now() / DAY) * DAY);
    say(`  ${days.length} partitions for the past days`);
    for (const day of days) {
      await run('begin');
      await partitions.addDayPartition(run, day, true);
      await run('commit');
    }
    const models = `array[${MODELS.map((model) => `'${model}'`).join(', ')}]`;
    const began = performance.now();
    const statementRows = 1_000_000;
    for (let first = 0; first < plan.rows; first += statementRows) {
      const last = Math.min(plan.rows, first + statementRows) - 1;
      // u: a uniform draw from the row's number; tokens skewed as the square of it.
      await run(
        `insert into request_logs (id, created_at, token_id, team, project, endpoint, model, upstream, upstream_model, session_id, status,
           latency_ms, ttfb_ms, prompt_tokens, completion_tokens, usage_source, error_code, logged_at, attempts, cost_usd)
         select 'req_' || lpad(to_hex(t), 12, '0') || 'b' || lpad(to_hex(g), 19, '0'), t,
           'tok_' || lpad(to_hex(tok), 6, '0'), 'team-' || (tok % ${TEAMS}), case when tok % ${TEAMS} % 4 = 0 then null else 'project-' || (tok % 3) end,
           'chat.completions', m, 'cred-' || (g % 24), m, case when u2 < 0.6 then 'conv-' || to_hex(g / 20) else null end,
           case when failed then 502 else 200 end, 80 + u2 * 5000, 40,
           case when failed then null else 50 + (u2 * u2 * 8000)::int end, case when failed then null else 10 + (u * u * 2000)::int end,
           case when failed then 'none' else 'upstream' end, case when failed then 'upstream_error' else null end, t + 100,
           '[{"credential":"cred-' || (g % 24) || '","outcome":"ok","status":200,"ms":120}]',
           case when failed then null else ((50 + (u2 * u2 * 8000)::int) * 0.15 + (10 + (u * u * 2000)::int) * 0.6) / 1000000 end
         from (
           select g, ${plan.sqlTimeOf('g')} as t, u, u2, floor(${TOKENS} * u * u)::int as tok,
             (${models})[1 + floor(power(u2, 1.5) * ${MODELS.length})::int] as m, u2 < 0.04 as failed
           from (select g, ((g * 2654435761) % 1000003) / 1000003.0 as u, ((g * 40503) % 999983) / 999983.0 as u2
                 from generate_series($1::bigint, $2::bigint) g) draws
         ) generated`,
        [first, last],
      );
      say(`  ${(last + 1).toLocaleString('en')} rows, ${((performance.now() - began) / 1000).toFixed(0)} s`);
    }
    say('  rollup of the bulk rows');
    await run(rollupFill(rollupKey, "substr(id, 17, 1) = 'b'"));
    await run((await built<SummaryModule>('store/request-usage-summary.js')).MARK_EVERY_ROLLUP_HOUR);
    say('  vacuum analyze');
    await run('vacuum analyze request_logs');
    await run('vacuum analyze request_usage_hourly');
  } finally {
    await client.end();
  }
}

interface FillPlan {
  rows: number;
  expired: number;
  start: number;
  timeOf(index: number): number;
  sqlTimeOf(column: string): string;
}

/**
 * `expired` rows spread over the ten days before the cutoff (now − retention − 1 day back), then the
 * rest over the retention's days up to an hour ago: time-ordered, as traffic writes them.
 */
function plan(rows: number, expired: number, retentionMs: number, now: number): FillPlan {
  const expiredStart = now - retentionMs - 11 * DAY;
  const expiredSpan = 10 * DAY;
  const liveStart = now - retentionMs + DAY;
  const liveSpan = retentionMs - DAY - HOUR;
  const live = rows - expired;
  return {
    rows,
    expired,
    start: expiredStart,
    timeOf: (index) =>
      index < expired ? Math.floor(expiredStart + (index * expiredSpan) / expired) : Math.floor(liveStart + ((index - expired) * liveSpan) / Math.max(1, live)),
    sqlTimeOf: (g) =>
      `(case when ${g} < ${expired} then ${expiredStart} + (${g} * ${expiredSpan}::bigint) / ${Math.max(1, expired)} else ${liveStart} + ((${g} - ${expired}) * ${liveSpan}::bigint) / ${Math.max(1, live)} end)::bigint`,
  };
}

interface Case {
  name: string;
  run(): Promise<number>;
}

function cases(queries: BuiltQueries, stores: Stores, now: number, sample: { token: string; team: string; session: string; id: string }): Case[] {
  const iso = (milliseconds: number) => new Date(milliseconds).toISOString();
  const page = (query: Record<string, unknown>) => async () => (await queries.list(query)).data.length;
  const month = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth());
  const tokens = Array.from({ length: 1_000 }, (_, index) => `tok_${index.toString(16).padStart(6, '0')}`);
  return [
    { name: 'requests: newest, no filter', run: page({}) },
    { name: `requests: token ${sample.token}`, run: page({ token_id: sample.token }) },
    { name: `requests: team ${sample.team}`, run: page({ team: sample.team }) },
    { name: 'requests: the last hour', run: page({ from: iso(now - HOUR), to: iso(now) }) },
    { name: 'requests: status 5xx', run: page({ status: '5xx' }) },
    { name: 'a request by id', run: async () => ((await queries.get(sample.id)).id === sample.id ? 1 : 0) },
    { name: `a session's turns (${sample.session})`, run: async () => (await queries.session(sample.session, {})).turns.length },
    {
      name: "usage: per day by team, 30 days (the console's chart)",
      run: async () => (await queries.usage({ bucket: 'day', group_by: 'team', from: iso(Math.floor(now / DAY) * DAY - 29 * DAY) })).data.length,
    },
    {
      name: 'usage: per hour by model, 24 hours',
      run: async () => (await queries.usage({ bucket: 'hour', group_by: 'model', from: iso(Math.floor(now / HOUR) * HOUR - 23 * HOUR) })).data.length,
    },
    {
      name: `usage: per day by token, 30 days, team ${sample.team}`,
      run: async () =>
        (await queries.usage({ bucket: 'day', group_by: 'token', team: sample.team, from: iso(Math.floor(now / DAY) * DAY - 29 * DAY) })).data.length,
    },
    { name: "token list's last use (1,000 tokens)", run: async () => (await stores.requestSearch.lastUsed(tokens)).size },
    {
      name: `quota rebuild: team ${sample.team}, this month`,
      run: async () => (await stores.requestSearch.spent({ team: sample.team, from: month, to: now + DAY })).tokens,
    },
    {
      name: `quota rebuild: token ${sample.token}, in all`,
      run: async () => (await stores.requestSearch.spent({ tokenId: sample.token, from: 0, to: now + 1 })).tokens,
    },
  ];
}

async function timeQueries(queries: BuiltQueries, stores: Stores, runs: number, warmup: number, lines: string[]): Promise<void> {
  const now = Date.now();
  const [newest] = (await queries.list({ limit: 1 })).data as Array<{ id: string }>;
  const withSession = (await queries.list({ to: new Date(now - 3 * DAY).toISOString(), limit: 200 })).data as Array<{
    id: string;
    session_id: string | null;
    token_id: string;
    team: string;
  }>;
  const target = withSession.find((row) => row.session_id !== null) ?? withSession[0];
  if (newest === undefined || target === undefined) throw new Error('the log is empty');
  const sample = { token: 'tok_000001', team: 'team-1', session: target.session_id ?? 'none', id: target.id };
  lines.push('', '| query | rows | median ms | p90 ms | max ms |', '|---|---:|---:|---:|---:|');
  for (const item of cases(queries, stores, now, sample)) {
    const { rows, times } = await timedRuns(item.run, warmup, runs);
    lines.push(
      `| ${item.name} | ${rows} | ${percentile(times, 0.5).toFixed(2)} | ${percentile(times, 0.9).toFixed(2)} | ${(times.at(-1) ?? Number.NaN).toFixed(2)} |`,
    );
    say(lines.at(-1) ?? '');
  }
}

/**
 * The usage summary made for every marked hour and day, as the gateway's first pass after an
 * upgrade (or a bulk fill) makes it: its length and the event loop's delay meanwhile.
 */
async function timeSummary(stores: Stores, lines: string[]): Promise<void> {
  const { usageSummarizer } = await built<SummaryModule>('store/request-usage-summary.js');
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const began = performance.now();
  const pass = await usageSummarizer(stores.database).run(Date.now());
  const seconds = (performance.now() - began) / 1000;
  delay.disable();
  const ms = (value: number) => (value / 1e6).toFixed(1);
  lines.push(
    '',
    `usage summary pass: ${pass.hours.toLocaleString('en')} hours summed in ${seconds.toFixed(1)} s${pass.skipped === null ? '' : ` (skipped: ${pass.skipped})`}; event loop delay p50 ${ms(delay.percentile(50))} ms, p99 ${ms(delay.percentile(99))}, max ${ms(delay.max)}`,
  );
  say(lines.at(-1) ?? '');
}

/**
 * A retention pass, with the event loop's delay measured and (`writerIntervalMs` > 0) a batch of
 * 100 rows inserted every so often meanwhile, as the queue would; SQLite's batches timed one by one.
 */
async function timePass(module: StoreModule, stores: Stores, retentionMs: number, writerIntervalMs: number, lines: string[]): Promise<void> {
  const traffic = new Traffic();
  const steps: Record<'delete' | 'vacuum', number[]> = { delete: [], vacuum: [] };
  const retention = module.requestLogRetention(stores.database, { retentionMs, onBatch: (step, _size, ms) => steps[step].push(ms) });
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  const inserts: number[] = [];
  let done = false;
  const writer = (async () => {
    while (!done && writerIntervalMs > 0) {
      const now = Date.now();
      const rows = Array.from({ length: 100 }, (_, index) => traffic.row(now - 1_000 + index));
      const began = performance.now();
      await stores.requestLogs.insertBatch(rows);
      inserts.push(performance.now() - began);
      await sleep(writerIntervalMs);
    }
  })();
  await sleep(200);
  histogram.enable();
  const pass = await retention.prune();
  histogram.disable();
  done = true;
  await writer;
  inserts.sort((a, b) => a - b);
  const ms = (nanoseconds: number) => (nanoseconds / 1e6).toFixed(1);
  const removed = pass.rowsDeleted + pass.partitionsDropped.reduce((sum, partition) => sum + partition.rows, 0);
  lines.push(
    '',
    `retention pass: ${removed.toLocaleString('en')} rows removed (${pass.rowsDeleted.toLocaleString('en')} deleted in batches, ${pass.partitionsDropped.length} partitions dropped, ${pass.pagesFreed.toLocaleString('en')} pages freed) in ${(pass.durationMs / 1000).toFixed(1)} s${pass.complete ? '' : ', incomplete'}${pass.partitionsDeferred.length > 0 ? `, deferred: ${JSON.stringify(pass.partitionsDeferred)}` : ''}`,
    `event loop delay during the pass: p50 ${ms(histogram.percentile(50))} ms, p99 ${ms(histogram.percentile(99))} ms, max ${ms(histogram.max)} ms (${histogram.count} samples)`,
    writerIntervalMs > 0
      ? `insert batches of 100 meanwhile (one every ${writerIntervalMs} ms): ${inserts.length}, median ${percentile(inserts, 0.5).toFixed(1)} ms, max ${(inserts.at(-1) ?? Number.NaN).toFixed(1)} ms`
      : 'no inserts meanwhile',
  );
  for (const step of ['delete', 'vacuum'] as const) {
    const times = steps[step].sort((a, b) => a - b);
    if (times.length > 0)
      lines.push(
        `SQLite ${step} steps: ${times.length}, median ${percentile(times, 0.5).toFixed(1)} ms, p99 ${percentile(times, 0.99).toFixed(1)} ms, max ${(times.at(-1) ?? Number.NaN).toFixed(1)} ms`,
      );
  }
  for (const line of lines.slice(-5)) say(line);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const url = option(argv, 'database');
  if (url === undefined)
    throw new Error(
      'usage: request-log-at-size --database sqlite:PATH|postgres://…/NAME [--rows N] [--expired N] [--retention-days D] [--runs N] [--writer-interval-ms MS]',
    );
  const rows = Number(option(argv, 'rows') ?? 1_000_000);
  const expired = Number(option(argv, 'expired') ?? Math.min(1_000_000, Math.floor(rows / 10)));
  const retentionMs = Number(option(argv, 'retention-days') ?? 90) * DAY;
  const runs = Number(option(argv, 'runs') ?? 15);
  const writerIntervalMs = Number(option(argv, 'writer-interval-ms') ?? 200);
  const module = await built<StoreModule>('store/index.js');
  const { usageGroupKeySql } = await built<RollupModule>('store/request-usage-rollup.js');
  await prepareDatabase(url);
  const lines: string[] = [];
  let stores = await module.openStores(url);
  if (argv.includes('--pass-only')) {
    // A log filled by an earlier run with --no-pass (or a copy of one): the retention pass alone.
    try {
      await timePass(module, stores, retentionMs, writerIntervalMs, lines);
    } finally {
      await stores.close();
    }
    process.stdout.write(`${lines.join('\n')}\n`);
    return;
  }
  if (argv.includes('--measure-only')) {
    // A log filled by an earlier run: inserts at its size and the queries again (after a change to the build).
    try {
      const atSize = await insertCost(stores, new Traffic(), 300);
      lines.push(
        `${stores.database.dialect}, ${(await stores.requestLogs.count()).toLocaleString('en')} rows; insertBatch at size ${atSize.median.toFixed(1)} µs a row (mean ${atSize.mean.toFixed(1)})`,
      );
      await timeSummary(stores, lines);
      await timeQueries(await builtQueries(stores as never), stores, runs, 3, lines);
    } finally {
      await stores.close();
    }
    process.stdout.write(`${lines.join('\n')}\n`);
    return;
  }
  try {
    if ((await stores.requestLogs.count()) > 0) throw new Error('the request log has rows already: give a new database');
    const traffic = new Traffic();
    await insertCost(stores, traffic, 30);
    const empty = await insertCost(stores, traffic, 300);
    say(`insert on the empty log: ${empty.median.toFixed(1)} µs a row (median of batches), mean ${empty.mean.toFixed(1)}`);
    const fill = plan(rows, expired, retentionMs, Date.now());
    say(`filling to ${rows.toLocaleString('en')} rows (${expired.toLocaleString('en')} expired)`);
    const began = performance.now();
    if (stores.database.dialect === 'sqlite') await fillSqlite(stores, fill, usageGroupKeySql());
    else await fillPostgres(url, fill, usageGroupKeySql());
    const fillSeconds = (performance.now() - began) / 1000;
    // Measured as the gateway opens it: its own connection settings, not the fill's.
    await stores.close();
    stores = await module.openStores(url);
    const total = await stores.requestLogs.count();
    const size = url.startsWith('sqlite:') ? ` (file ${(statSync(url.slice('sqlite:'.length)).size / 1e9).toFixed(2)} GB)` : '';
    lines.push(
      `${stores.database.dialect}, ${total.toLocaleString('en')} rows${size}, filled in ${fillSeconds.toFixed(0)} s; node ${process.version}, ${new Date().toISOString().slice(0, 10)}`,
    );
    await insertCost(stores, traffic, 30);
    const atSize = await insertCost(stores, traffic, 300);
    lines.push(
      '',
      `insertBatch, batches of 100: empty log ${empty.median.toFixed(1)} µs a row (mean ${empty.mean.toFixed(1)}); at size ${atSize.median.toFixed(1)} µs (mean ${atSize.mean.toFixed(1)}): ${((atSize.median / empty.median - 1) * 100).toFixed(0)}% more`,
    );
    say(lines.at(-1) ?? '');
    await timeSummary(stores, lines);
    await timeQueries(await builtQueries(stores as never), stores, runs, 3, lines);
    if (!argv.includes('--no-pass')) {
      await timePass(module, stores, retentionMs, writerIntervalMs, lines);
      await timeQueries(await builtQueries(stores as never), stores, runs, 3, lines);
    }
  } finally {
    await stores.close();
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
