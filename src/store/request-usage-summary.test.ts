import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_BACKENDS, describeEachBackend } from '../../test/support/database-backends.js';
import { requestLogEntry } from '../../test/support/request-log-entries.js';
import { insertUnrolled, migrateUpTo } from '../../test/support/release-before.js';
import { openStores, type RequestLogEntry, type Stores, type UsageGroup, type UsageQuery, type UsageRow } from './index.js';
import { ROLLUP_ON_CONFLICT, usageGroupKey } from './request-usage-rollup.js';
import { MARK_ON_CONFLICT, planUsageRead, SUMMARY_GRACE_MS, usageSummarizer } from './request-usage-summary.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** 2025-06-01T00:00:00Z */
const DAY_START = Date.UTC(2025, 5, 1);
/** The summary pass's clock: well after every row below. */
const LATER = DAY_START + 10 * DAY;

const TEAMS = ['search', 'ads', null, 'pipe|tilde~team'] as const;
const MODELS = ['gpt-4o-mini', 'claude', null] as const;

/** Rows over three days: groups with nulls and keys' separators, errors, costs (exact in binary, so sums in any order agree) and none. */
function rowsOver(firstDay: number, count: number, salt = 0): RequestLogEntry[] {
  return Array.from({ length: count }, (_, index) => {
    const spread = (index * 7_919 + salt * 104_729) % (3 * 24 * 60);
    const team = TEAMS[(index + salt) % TEAMS.length] ?? null;
    return requestLogEntry(firstDay + spread * 60_000 + (index % 60) * 1_000, {
      tokenId: index % 5 === 0 ? null : `tok_${(index + salt) % 4}`,
      team,
      project: index % 3 === 0 ? null : index % 3 === 1 ? 'ranker' : '',
      model: MODELS[(index * 3 + salt) % MODELS.length] ?? null,
      status: index % 7 === 0 ? 502 : index % 11 === 0 ? 429 : 200,
      promptTokens: index % 9 === 0 ? null : 10 + index,
      completionTokens: 5 + (index % 4),
      cachedTokens: index % 13 === 0 ? null : index % 3,
      costUsd: index % 4 === 0 ? null : (index % 8) * 0.25,
    });
  });
}

const COLUMNS: Record<UsageGroup, ReadonlyArray<'token_id' | 'team' | 'project' | 'model'>> = {
  token: ['token_id'],
  team: ['team'],
  project: ['team', 'project'],
  model: ['model'],
};

/** What a usage read must answer, summed here from the rows themselves. */
function expected(rows: readonly RequestLogEntry[], query: UsageQuery): UsageRow[] {
  const columns = COLUMNS[query.groupBy];
  const value = (row: RequestLogEntry, column: 'token_id' | 'team' | 'project' | 'model') =>
    column === 'token_id' ? row.tokenId : column === 'team' ? row.team : column === 'project' ? row.project : row.model;
  const filter = query.filter ?? {};
  const sums = new Map<string, UsageRow>();
  for (const row of rows) {
    if (row.createdAt < query.from || row.createdAt >= query.to) continue;
    if (filter.tokenId !== undefined && row.tokenId !== filter.tokenId) continue;
    if (filter.team !== undefined && row.team !== filter.team) continue;
    if (filter.project !== undefined && row.project !== filter.project) continue;
    if (filter.model !== undefined && row.model !== filter.model) continue;
    const start = Math.floor(row.createdAt / query.bucketMs) * query.bucketMs;
    const group = Object.fromEntries(columns.map((column) => [column, value(row, column)]));
    const key = JSON.stringify([start, group]);
    const sum = sums.get(key) ?? { start, group, requests: 0, errors: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0, costUsd: null };
    sum.requests += 1;
    if (row.status >= 400) sum.errors += 1;
    sum.promptTokens += row.promptTokens ?? 0;
    sum.completionTokens += row.completionTokens ?? 0;
    sum.cachedTokens += row.cachedTokens ?? 0;
    if (row.costUsd !== null) sum.costUsd = (sum.costUsd ?? 0) + row.costUsd;
    sums.set(key, sum);
  }
  const order = (a: UsageRow, b: UsageRow) => {
    if (a.start !== b.start) return a.start - b.start;
    for (const column of columns) {
      const left = a.group[column] ?? null;
      const right = b.group[column] ?? null;
      if (left === right) continue;
      if (left === null) return 1;
      if (right === null) return -1;
      return left < right ? -1 : 1;
    }
    return 0;
  };
  return [...sums.values()].sort(order);
}

/** Every grouping, both buckets, and filters the summary answers and one it does not (a team, grouped by model). */
const READS: ReadonlyArray<Pick<UsageQuery, 'groupBy' | 'bucketMs' | 'filter'>> = (['token', 'team', 'project', 'model'] as const).flatMap((groupBy) =>
  [HOUR, DAY].flatMap((bucketMs) => [
    { groupBy, bucketMs },
    { groupBy, bucketMs, filter: { team: 'search' } },
    { groupBy, bucketMs, filter: { model: 'claude' } },
  ]),
);

/** A range that starts and ends within an hour, so its edges are read from the rows; and one of whole hours, read from the summaries and the rollup alone. */
const RANGES = [
  { from: DAY_START - 20 * 60_000, to: DAY_START + 3 * DAY + 10 * 60_000, limit: 10_000 },
  { from: DAY_START, to: DAY_START + 3 * DAY, limit: 10_000 },
];

async function expectReadsRight(stores: Stores, rows: readonly RequestLogEntry[]): Promise<void> {
  for (const range of RANGES) {
    for (const read of READS) {
      const query = { ...range, ...read };
      expect(await stores.requestSearch.usage(query), JSON.stringify(query)).toEqual(expected(rows, query));
    }
  }
}

/** The hours marked, in order. */
async function pendingMarks(stores: Stores): Promise<number[]> {
  const rows = await stores.database.db.selectFrom('request_usage_pending').select('hour_start').orderBy('hour_start').execute();
  return rows.map((row) => Number(row.hour_start));
}

const hoursOf = (rows: readonly RequestLogEntry[]) => new Set(rows.map((row) => Math.floor(row.createdAt / HOUR) * HOUR));

describeEachBackend('usage summary', (backend) => {
  let stores: Stores;
  let dispose: () => Promise<void>;

  beforeEach(async () => {
    ({ stores, dispose } = await backend.open());
  });
  afterEach(async () => {
    await dispose();
  });

  it('reads the same usage before its pass, after it, with late rows marking a summed hour again, and after the next pass', async () => {
    const rows = rowsOver(DAY_START, 400);
    for (let index = 0; index < rows.length; index += 50) await stores.requestLogs.insertBatch(rows.slice(index, index + 50));
    expect(await pendingMarks(stores)).toEqual([...hoursOf(rows)].sort((a, b) => a - b));
    await expectReadsRight(stores, rows);

    const summarizer = usageSummarizer(stores.database);
    const first = await summarizer.run(LATER);
    expect(first).toMatchObject({ skipped: null, hours: hoursOf(rows).size, complete: true });
    expect(await pendingMarks(stores)).toEqual([]);
    await expectReadsRight(stores, rows);

    // Requests that started in an hour already summed, logged late.
    const late = rowsOver(DAY_START + DAY + 5 * HOUR, 12, 1).map((row) => ({ ...row, createdAt: DAY_START + DAY + 5 * HOUR + (row.createdAt % HOUR) }));
    await stores.requestLogs.insertBatch(late);
    expect(await pendingMarks(stores)).toEqual([DAY_START + DAY + 5 * HOUR]);
    await expectReadsRight(stores, [...rows, ...late]);

    expect(await summarizer.run(LATER)).toMatchObject({ hours: 1 });
    expect(await pendingMarks(stores)).toEqual([]);
    await expectReadsRight(stores, [...rows, ...late]);
  });

  it('leaves the hour under way, and the grace after one, to the rollup, and its day to its hours', async () => {
    const now = DAY_START + 2 * DAY + 10 * HOUR + 30 * 60_000;
    const rows = [
      requestLogEntry(DAY_START + 2 * DAY + 8 * HOUR + 1_000),
      requestLogEntry(DAY_START + 2 * DAY + 9 * HOUR + 1_000, { team: 'ads' }),
      requestLogEntry(DAY_START + 2 * DAY + 10 * HOUR + 1_000),
    ];
    await stores.requestLogs.insertBatch(rows);
    const summarizer = usageSummarizer(stores.database);
    const query = { from: DAY_START, to: DAY_START + 3 * DAY, bucketMs: DAY, groupBy: 'team' as const, limit: 10 };
    // 09:00 ended 30 minutes ago: summed; 10:00 is under way.
    expect(await summarizer.run(now)).toMatchObject({ hours: 2 });
    expect(await pendingMarks(stores)).toEqual([DAY_START + 2 * DAY + 10 * HOUR]);
    expect(await stores.requestSearch.usage(query)).toEqual(expected(rows, query));
    // 10:00 ended less than the grace ago: left for the next pass.
    expect(await summarizer.run(DAY_START + 2 * DAY + 11 * HOUR + SUMMARY_GRACE_MS - 1)).toMatchObject({ hours: 0 });
    expect(await summarizer.run(DAY_START + 2 * DAY + 11 * HOUR + SUMMARY_GRACE_MS)).toMatchObject({ hours: 1 });
    expect(await pendingMarks(stores)).toEqual([]);
    expect(await stores.requestSearch.usage(query)).toEqual(expected(rows, query));
  });

  it('reads a summed day from its day summary, and its hours from theirs', async () => {
    const rows = rowsOver(DAY_START, 60);
    await stores.requestLogs.insertBatch(rows);
    await usageSummarizer(stores.database).run(LATER);
    // A summary changed behind the rollup's back shows in what is read: the reads come from it.
    await stores.database.db
      .updateTable('request_usage_summary')
      .set({ requests: sql<number>`requests + 1000` })
      .where('period_ms', '=', DAY)
      .where('period_start', '=', DAY_START + DAY)
      .where('dimension', '=', 'team')
      .where('team', '=', 'search')
      .execute();
    const day = { from: DAY_START, to: DAY_START + 3 * DAY, groupBy: 'team' as const, limit: 100 };
    const daily = await stores.requestSearch.usage({ ...day, bucketMs: DAY });
    const reference = expected(rows, { ...day, bucketMs: DAY });
    expect(daily).toEqual(
      reference.map((row) => (row.start === DAY_START + DAY && row.group['team'] === 'search' ? { ...row, requests: row.requests + 1000 } : row)),
    );
    expect(await stores.requestSearch.usage({ ...day, bucketMs: HOUR })).toEqual(expected(rows, { ...day, bucketMs: HOUR }));
  });

  it('stays exact while batches and passes run at once', async () => {
    const batches = Array.from({ length: 24 }, (_, index) => rowsOver(DAY_START, 30, index + 2));
    const summarizer = usageSummarizer(stores.database);
    const writers = batches.map((batch, index) => new Promise((resolve) => setTimeout(resolve, index * 3)).then(() => stores.requestLogs.insertBatch(batch)));
    const passes = Array.from({ length: 6 }, (_, index) => new Promise((resolve) => setTimeout(resolve, index * 12)).then(() => summarizer.run(LATER)));
    await Promise.all([...writers, ...passes]);
    await summarizer.run(LATER);
    expect(await pendingMarks(stores)).toEqual([]);
    await expectReadsRight(stores, batches.flat());
  });
});

describeEachBackend('usage summary, on a database of an earlier release', (backend) => {
  it('marks every hour the rollup had, and the first pass sums them', async () => {
    const { url, dispose } = await backend.empty();
    try {
      const old = await migrateUpTo(url, '0014');
      const rows = rowsOver(DAY_START, 120);
      await insertUnrolled(old, rows);
      await old.destroy();
      const stores = await openStores(url);
      try {
        expect(await pendingMarks(stores)).toEqual([...hoursOf(rows)].sort((a, b) => a - b));
        expect(await usageSummarizer(stores.database).run(LATER)).toMatchObject({ hours: hoursOf(rows).size });
        await expectReadsRight(stores, rows);
      } finally {
        await stores.close();
      }
    } finally {
      await dispose();
    }
  });
});

describe('planUsageRead', () => {
  const none = new Set<number>();

  it('reads whole unmarked days from day summaries, the hours around them from hour summaries', () => {
    expect(planUsageRead(DAY_START - 2 * HOUR, DAY_START + 2 * DAY + 3 * HOUR, DAY, none)).toEqual({
      days: [{ from: DAY_START, to: DAY_START + 2 * DAY }],
      hours: [
        { from: DAY_START - 2 * HOUR, to: DAY_START },
        { from: DAY_START + 2 * DAY, to: DAY_START + 2 * DAY + 3 * HOUR },
      ],
      marked: [],
    });
  });

  it('reads no day summary for hour buckets', () => {
    expect(planUsageRead(DAY_START, DAY_START + 2 * DAY, HOUR, none)).toEqual({ days: [], hours: [{ from: DAY_START, to: DAY_START + 2 * DAY }], marked: [] });
  });

  it('reads a marked hour from the rollup, and the rest of its day from its hours', () => {
    const marked = new Set([DAY_START + 5 * HOUR, DAY_START + 2 * DAY + 23 * HOUR]);
    expect(planUsageRead(DAY_START, DAY_START + 4 * DAY, DAY, marked)).toEqual({
      days: [
        { from: DAY_START + DAY, to: DAY_START + 2 * DAY },
        { from: DAY_START + 3 * DAY, to: DAY_START + 4 * DAY },
      ],
      hours: [
        { from: DAY_START, to: DAY_START + 5 * HOUR },
        { from: DAY_START + 6 * HOUR, to: DAY_START + DAY },
        { from: DAY_START + 2 * DAY, to: DAY_START + 2 * DAY + 23 * HOUR },
      ],
      marked: [DAY_START + 5 * HOUR, DAY_START + 2 * DAY + 23 * HOUR],
    });
  });
});

const postgres = DATABASE_BACKENDS.find((candidate) => candidate.name === 'postgres');

describe.skipIf(postgres?.available !== true)('usage summary on postgres, racing a batch', () => {
  it('keeps the mark of an hour a batch wrote to while the pass summed it, so the next pass sums it again', async () => {
    const { stores, url, schema, dispose } = await (postgres as NonNullable<typeof postgres>).open();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(`set search_path to ${schema}`);
      const hour = DAY_START + 3 * HOUR;
      await stores.requestLogs.insertBatch([requestLogEntry(hour + 1_000)]);
      // A batch under way: its usage and its mark written, not yet committed, as the store's statement does.
      await client.query('begin');
      await client.query(
        `insert into request_usage_hourly (hour_start, group_key, token_id, team, project, model, requests, errors, prompt_tokens,
           completion_tokens, cached_tokens, reasoning_tokens, cost_usd)
         values ($1, $2, 'tok_a', 'search', 'ranker', 'gpt-4o-mini', 1, 0, 10, 5, 2, 0, 0.001) ${ROLLUP_ON_CONFLICT}`,
        [hour, usageGroupKey('tok_a', 'search', 'ranker', 'gpt-4o-mini')],
      );
      await client.query(`insert into request_usage_pending (hour_start, marks) values ($1, 1) ${MARK_ON_CONFLICT}`, [hour]);
      const pass = usageSummarizer(stores.database).run(LATER);
      // The pass has summed the hour without the batch and waits for the batch's lock on the mark.
      for (let waited = 0; ; waited += 20) {
        const { rows } = await client.query<{ waiting: string }>(`select count(*) as waiting from pg_locks where not granted`);
        if (Number(rows[0]?.waiting) > 0) break;
        if (waited > 5_000) throw new Error('the pass never waited for the batch');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await client.query('commit');
      await pass;
      expect(await pendingMarks(stores)).toEqual([hour]);
      const query = { from: hour, to: hour + HOUR, bucketMs: HOUR, groupBy: 'team' as const, limit: 10 };
      expect((await stores.requestSearch.usage(query)).map((row) => row.requests)).toEqual([2]);
      expect(await usageSummarizer(stores.database).run(LATER)).toMatchObject({ hours: 1 });
      expect(await pendingMarks(stores)).toEqual([]);
      expect((await stores.requestSearch.usage(query)).map((row) => row.requests)).toEqual([2]);
    } finally {
      await client.end();
      await dispose();
    }
  });
});
