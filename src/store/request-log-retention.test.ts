import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_BACKENDS, describeEachBackend } from '../../test/support/database-backends.js';
import { requestLogEntry } from '../../test/support/request-log-entries.js';
import { insertUnrolled, migrateUpTo } from '../../test/support/release-before.js';
import { openStores, requestLogRetention, rowsRemoved, vacuumSqlite, type RequestLogEntry, type Stores } from './index.js';
import { RETENTION_LOCK_CLASS } from './request-log-retention.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Tests run against the real clock: PostgreSQL's partitions are made for the days around it. */
const NOW = Date.now();
const TODAY = Math.floor(NOW / DAY) * DAY;
const RETENTION = 5 * DAY;

/** Rows of many groups: tokens, teams, projects and models (nulls among them), errors, costs and none. */
function rowsAt(startedAt: number, count: number): RequestLogEntry[] {
  return Array.from({ length: count }, (_, index) =>
    requestLogEntry(startedAt + index * 7 * 60_000, {
      tokenId: index % 5 === 0 ? null : `tok_${index % 3}`,
      team: index % 4 === 0 ? 'ads' : 'search',
      project: index % 2 === 0 ? null : 'ranker',
      model: index % 6 === 0 ? null : index % 2 === 0 ? 'gpt-4o-mini' : 'claude',
      status: index % 7 === 0 ? 502 : 200,
      promptTokens: index % 9 === 0 ? null : 10 + index,
      completionTokens: 5 + (index % 4),
      cachedTokens: index % 3,
      reasoningTokens: index % 5 === 0 ? null : 1,
      // Halves and quarters: sums are exact in any order.
      costUsd: index % 8 === 0 ? null : (index % 4) * 0.25,
    }),
  );
}

interface Totals {
  requests: number;
  errors: number;
  prompt: number;
  completion: number;
  cached: number;
  reasoning: number;
  usd: number;
}

function sumOf(rows: readonly RequestLogEntry[]): Totals {
  return {
    requests: rows.length,
    errors: rows.filter((row) => row.status >= 400).length,
    prompt: rows.reduce((sum, row) => sum + (row.promptTokens ?? 0), 0),
    completion: rows.reduce((sum, row) => sum + (row.completionTokens ?? 0), 0),
    cached: rows.reduce((sum, row) => sum + (row.cachedTokens ?? 0), 0),
    reasoning: rows.reduce((sum, row) => sum + (row.reasoningTokens ?? 0), 0),
    usd: rows.reduce((sum, row) => sum + (row.costUsd ?? 0), 0),
  };
}

async function rollupTotals(stores: Stores): Promise<Totals> {
  const row = await stores.database.db
    .selectFrom('request_usage_hourly')
    .select([
      sql<number>`coalesce(sum(requests), 0)`.as('requests'),
      sql<number>`coalesce(sum(errors), 0)`.as('errors'),
      sql<number>`coalesce(sum(prompt_tokens), 0)`.as('prompt'),
      sql<number>`coalesce(sum(completion_tokens), 0)`.as('completion'),
      sql<number>`coalesce(sum(cached_tokens), 0)`.as('cached'),
      sql<number>`coalesce(sum(reasoning_tokens), 0)`.as('reasoning'),
      sql<number>`coalesce(sum(cost_usd), 0)`.as('usd'),
    ])
    .executeTakeFirstOrThrow();
  return Object.fromEntries(Object.entries(row).map(([key, value]) => [key, Number(value)])) as unknown as Totals;
}

async function loggedIds(stores: Stores): Promise<string[]> {
  return (await stores.requestSearch.search({}, { limit: 10_000 })).map((row) => row.id).sort();
}

/** What quotas and the usage charts read, over periods of whole hours and one ending now. */
async function readings(stores: Stores, oldDay: number) {
  const search = stores.requestSearch;
  const month = Date.UTC(new Date(NOW).getUTCFullYear(), new Date(NOW).getUTCMonth());
  return {
    day: await search.spent({ team: 'search', from: oldDay, to: oldDay + DAY }),
    token: await search.spent({ tokenId: 'tok_1', from: oldDay, to: oldDay + DAY }),
    project: await search.spent({ team: 'search', project: 'ranker', from: oldDay, to: oldDay + DAY }),
    total: await search.spent({ tokenId: 'tok_2', from: 0, to: NOW + 1 }),
    month: await search.spent({ team: 'ads', from: Math.min(month, oldDay), to: NOW + DAY }),
    chart: await search.usage({ from: TODAY - 29 * DAY, to: NOW, bucketMs: DAY, groupBy: 'team', limit: 1_000 }),
    hourly: await search.usage({ from: oldDay, to: oldDay + DAY, bucketMs: HOUR, groupBy: 'model', limit: 1_000 }),
    byProject: await search.usage({ from: oldDay, to: NOW, bucketMs: DAY, groupBy: 'project', filter: { team: 'search' }, limit: 1_000 }),
  };
}

describeEachBackend('request log retention', (backend) => {
  let stores: Stores;
  let dispose: () => Promise<void>;

  beforeEach(async () => {
    ({ stores, dispose } = await backend.open());
  });
  afterEach(async () => {
    await dispose();
  });

  it('removes the rows that started before now − retention, keeps the others, and the rollup, quotas and charts read the same after', async () => {
    const oldDay = TODAY - 10 * DAY;
    const old = [...rowsAt(oldDay + 2 * HOUR, 40), requestLogEntry(oldDay + 7 * HOUR + 123_456, { tokenId: 'tok_gone', costUsd: 0.5 })];
    const recent = [...rowsAt(NOW - 3 * DAY, 12), ...rowsAt(NOW - 2 * HOUR, 3)];
    // In batches, as the queue writes them.
    for (let index = 0; index < old.length; index += 15) await stores.requestLogs.insertBatch(old.slice(index, index + 15));
    await stores.requestLogs.insertBatch(recent);
    const inserted = sumOf([...old, ...recent]);
    expect(await rollupTotals(stores)).toEqual(inserted);
    const before = await readings(stores, oldDay);
    expect(before.day.tokens).toBeGreaterThan(0);
    expect(before.chart.length).toBeGreaterThan(2);

    // Small batches: the pass goes round its loop several times.
    const pass = await requestLogRetention(stores.database, { retentionMs: RETENTION, now: () => NOW, batchRows: 7 }).prune();
    expect(pass).toMatchObject({ skipped: null, cutoff: NOW - RETENTION, complete: true });
    expect(rowsRemoved(pass)).toBe(old.length);
    expect(await loggedIds(stores)).toEqual(recent.map((row) => row.id).sort());
    expect(await rollupTotals(stores)).toEqual(inserted);
    expect(await readings(stores, oldDay)).toEqual(before);

    // A token whose rows are all gone was last used in the hour the rollup keeps.
    const lastRecent = recent.filter((row) => row.tokenId === 'tok_1').at(-1) as RequestLogEntry;
    expect(await stores.requestSearch.lastUsed(['tok_gone', 'tok_1', 'tok_never'])).toEqual(
      new Map([
        ['tok_gone', oldDay + 7 * HOUR],
        ['tok_1', lastRecent.createdAt],
      ]),
    );

    // Nothing more to remove.
    const again = await requestLogRetention(stores.database, { retentionMs: RETENTION, now: () => NOW }).prune();
    expect(rowsRemoved(again)).toBe(0);
  });

  it('removes nothing when the retention is forever', async () => {
    const rows = rowsAt(TODAY - 400 * DAY, 10);
    await stores.requestLogs.insertBatch(rows);
    const pass = await requestLogRetention(stores.database, { retentionMs: null, now: () => NOW }).prune();
    expect(pass).toMatchObject({ skipped: 'forever', cutoff: null, rowsDeleted: 0, partitionsDropped: [] });
    expect(await loggedIds(stores)).toEqual(rows.map((row) => row.id).sort());
  });

  it('adds a batch to the rollup with its rows, or not at all', async () => {
    const first = rowsAt(NOW - HOUR, 4);
    await stores.requestLogs.insertBatch(first);
    const duplicate = { ...(first[0] as RequestLogEntry) };
    await expect(stores.requestLogs.insertBatch([...rowsAt(NOW - HOUR, 3), duplicate])).rejects.toThrow();
    expect(await rollupTotals(stores)).toEqual(sumOf(first));
  });

  it('stops between batches when asked (shutdown), leaving the rest for the next pass', async () => {
    await stores.requestLogs.insertBatch(rowsAt(TODAY - 20 * DAY, 30));
    const controller = new AbortController();
    controller.abort();
    const retention = requestLogRetention(stores.database, { retentionMs: RETENTION, now: () => NOW, batchRows: 5 });
    const stopped = await retention.prune(controller.signal);
    expect(stopped.complete).toBe(false);
    expect(await stores.requestLogs.count()).toBeGreaterThan(0);
    expect(rowsRemoved(await retention.prune())).toBe(30 - rowsRemoved(stopped));
    expect(await stores.requestLogs.count()).toBe(0);
  });
});

describeEachBackend('request log rollup, from a database of the release before', (backend) => {
  it('is filled from the rows already logged, so quotas and charts read the same as from the rows', async () => {
    const { url, dispose } = await backend.empty();
    try {
      const old = await migrateUpTo(url, '0014');
      const oldDay = TODAY - 3 * DAY;
      const rows = [...rowsAt(oldDay + HOUR, 30), ...rowsAt(NOW - 2 * HOUR, 5)];
      await insertUnrolled(old, rows);
      // What the release before read: sums over the rows themselves.
      const fromRows = await sql<{ tokens: number; usd: number }>`
        select sum(coalesce(prompt_tokens, 0) + coalesce(completion_tokens, 0)) as tokens, sum(coalesce(cost_usd, 0)) as usd
        from request_logs where team = 'search' and created_at >= ${oldDay} and created_at < ${oldDay + DAY}`.execute(old);
      await old.destroy();

      const stores = await openStores(url);
      try {
        expect(await rollupTotals(stores)).toEqual(sumOf(rows));
        const spent = await stores.requestSearch.spent({ team: 'search', from: oldDay, to: oldDay + DAY });
        expect(spent).toEqual({ tokens: Number(fromRows.rows[0]?.tokens), usd: Number(fromRows.rows[0]?.usd) });
        // Rows written since add to what was filled in.
        const more = rowsAt(oldDay + 3 * HOUR, 4);
        await stores.requestLogs.insertBatch(more);
        expect(await rollupTotals(stores)).toEqual(sumOf([...rows, ...more]));
      } finally {
        await stores.close();
      }
    } finally {
      await dispose();
    }
  });
});

const postgres = DATABASE_BACKENDS.find((candidate) => candidate.name === 'postgres');

describe.skipIf(postgres?.available !== true)('request log partitions on PostgreSQL', () => {
  let url: string;
  let dispose: () => Promise<void>;
  let client: pg.Client;

  const query = async <T extends Record<string, unknown>>(text: string, parameters: unknown[] = []): Promise<T[]> =>
    (await client.query<T>(text, parameters)).rows;
  /** The request log's partitions, by name, as the catalog has them. */
  const partitions = async (): Promise<string[]> =>
    (
      await query<{ name: string }>(
        `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'request_logs'::regclass order by 1`,
      )
    ).map((row) => row.name);
  const tableExists = async (name: string): Promise<boolean> =>
    (await query<{ found: boolean }>('select to_regclass($1) is not null as found', [name]))[0]?.found === true;
  const rowsIn = async (table: string): Promise<number> => Number((await query<{ count: string }>(`select count(*) as count from ${table}`))[0]?.count);
  const day = (start: number) => `request_logs_p${new Date(start).toISOString().slice(0, 10).replaceAll('-', '')}`;

  beforeEach(async () => {
    ({ url, dispose } = await (postgres as NonNullable<typeof postgres>).empty());
    client = new pg.Client({ connectionString: url });
    await client.connect();
  });
  afterEach(async () => {
    await client.end();
    await dispose();
  });

  it('converts a table of the release before: its rows kept in the legacy partition, days ahead, a DEFAULT partition; passes delete, then drop it', async () => {
    const old = await migrateUpTo(url, '0014');
    const ancient = rowsAt(TODAY - 40 * DAY, 20);
    const recent = rowsAt(TODAY - 2 * DAY, 10);
    const today = rowsAt(TODAY + 60_000, 5);
    await insertUnrolled(old, [...ancient, ...recent, ...today]);
    await old.destroy();

    const stores = await openStores(url);
    try {
      expect(await partitions()).toEqual(
        ['request_logs_default', 'request_logs_legacy', ...Array.from({ length: 7 }, (_, index) => day(TODAY + (index + 1) * DAY))].sort(),
      );
      expect(await rowsIn('request_logs_legacy')).toBe(35);
      // Keyed by (id, created_at); every index of the log is there, partitioned.
      const indexes = await query<{ name: string }>(
        `select indexname as name from pg_indexes where schemaname = current_schema() and tablename = 'request_logs' order by 1`,
      );
      expect(indexes.map((row) => row.name)).toEqual([
        'request_logs_client_request_index',
        'request_logs_logged_at_index',
        'request_logs_pkey',
        'request_logs_session_index',
        'request_logs_team_index',
        'request_logs_token_index',
      ]);
      expect(
        (await query<{ definition: string }>(`select pg_get_constraintdef(oid) as definition from pg_constraint where conname = 'request_logs_pkey'`))[0],
      ).toEqual({ definition: 'PRIMARY KEY (id, created_at)' });
      expect(await loggedIds(stores)).toEqual([...ancient, ...recent, ...today].map((row) => row.id).sort());
      expect((await stores.requestSearch.find(recent[3]?.id as string))?.promptTokens).toBe(recent[3]?.promptTokens);

      // A row far ahead of every partition lands in the DEFAULT one.
      const future = rowsAt(TODAY + 400 * DAY, 1);
      await stores.requestLogs.insertBatch(future);
      expect(await rowsIn('request_logs_default')).toBe(1);
      // Tomorrow's rows go to tomorrow's partition.
      await stores.requestLogs.insertBatch(rowsAt(TODAY + DAY + HOUR, 2));
      expect(await rowsIn(day(TODAY + DAY))).toBe(2);

      // Ten days: the legacy partition has expired in part; its expired rows are deleted in batches.
      const tenDays = requestLogRetention(stores.database, { retentionMs: 10 * DAY, now: () => NOW, batchRows: 6 });
      const first = await tenDays.prune();
      expect(first).toMatchObject({ rowsDeleted: ancient.length, partitionsDropped: [], partitionsDeferred: [] });
      expect(await tableExists('request_logs_legacy')).toBe(true);
      expect(await rowsIn('request_logs_legacy')).toBe(15);

      // Twelve days on, all of it and the first days' partitions have expired: dropped whole.
      const later = requestLogRetention(stores.database, { retentionMs: 10 * DAY, now: () => NOW + 12 * DAY });
      const second = await later.prune();
      expect(second.partitionsDropped).toEqual([
        { name: 'request_logs_legacy', rows: 15 },
        { name: day(TODAY + DAY), rows: 2 },
      ]);
      expect(second.rowsDeleted).toBe(0);
      expect(await tableExists('request_logs_legacy')).toBe(false);
      expect(await tableExists(day(TODAY + DAY))).toBe(false);
      expect(await partitions()).not.toContain('request_logs_legacy');
      // The days ahead of that later day were made; the future row is still in the DEFAULT partition.
      expect(second.partitionsCreated).toEqual(
        Array.from({ length: 8 }, (_, index) => day(TODAY + (12 + index) * DAY)).filter((name) => name > day(TODAY + 7 * DAY)),
      );
      expect(await partitions()).toContain(day(TODAY + 19 * DAY));
      expect(await rowsIn('request_logs_default')).toBe(1);
      expect((await stores.requestLogs.query()).map((row) => row.id)).toEqual(future.map((row) => row.id));
    } finally {
      await stores.close();
    }
  });

  it('makes a missing day whose rows went to the DEFAULT partition, moving them into it', async () => {
    const stores = await openStores(url);
    try {
      const stray = rowsAt(TODAY + 9 * DAY + HOUR, 3);
      await stores.requestLogs.insertBatch(stray);
      expect(await rowsIn('request_logs_default')).toBe(3);
      const pass = await requestLogRetention(stores.database, { retentionMs: null, now: () => NOW + 5 * DAY }).maintain();
      expect(pass.partitionsCreated).toContain(day(TODAY + 9 * DAY));
      expect(await rowsIn('request_logs_default')).toBe(0);
      expect(await rowsIn(day(TODAY + 9 * DAY))).toBe(3);
      expect(await loggedIds(stores)).toEqual(stray.map((row) => row.id).sort());
    } finally {
      await stores.close();
    }
  });

  it('runs one pass at a time: a pass while another process holds the lock is skipped, and runs once it is let go', async () => {
    const stores = await openStores(url);
    try {
      await stores.requestLogs.insertBatch(rowsAt(TODAY - 20 * DAY, 4));
      const retention = requestLogRetention(stores.database, { retentionMs: RETENTION, now: () => NOW });
      await query('select pg_advisory_lock($1, hashtext(current_schema()))', [RETENTION_LOCK_CLASS]);
      expect(await retention.prune()).toMatchObject({ skipped: 'busy', rowsDeleted: 0, partitionsDropped: [] });
      expect(await stores.requestLogs.count()).toBe(4);
      await query('select pg_advisory_unlock($1, hashtext(current_schema()))', [RETENTION_LOCK_CLASS]);

      // Two at once: one runs, the other is skipped or finds nothing left; never both deleting.
      const passes = await Promise.all([retention.prune(), retention.prune()]);
      expect(passes.reduce((sum, pass) => sum + rowsRemoved(pass), 0)).toBe(4);
      expect(await stores.requestLogs.count()).toBe(0);
    } finally {
      await stores.close();
    }
  });
});

describe('request log retention on SQLite: the space of removed rows', () => {
  let url: string;
  let dispose: () => Promise<void>;
  const sqliteBackend = DATABASE_BACKENDS.find((candidate) => candidate.name === 'sqlite') as (typeof DATABASE_BACKENDS)[number];
  /** Wide rows, so that they take many pages. */
  const wideRows = (startedAt: number, count: number): RequestLogEntry[] =>
    Array.from({ length: count }, (_, index) =>
      requestLogEntry(startedAt + index, {
        sessionId: `session-${index % 50}`,
        attempts: Array.from({ length: 6 }, (_, attempt) => ({ credential: `credential-${attempt}`, outcome: 'upstream_overloaded', status: 529, ms: 12.5 })),
      }),
    );
  const pragma = (stores: Stores, name: string): number => Number(stores.database.sqlite?.pragma(name, { simple: true }));

  beforeEach(async () => {
    ({ url, dispose } = await sqliteBackend.empty());
  });
  afterEach(async () => {
    await dispose();
  });

  it('gives the pages of removed rows back (incremental vacuum), and the file does not keep growing as rows come and go', async () => {
    const stores = await openStores(url);
    try {
      expect(pragma(stores, 'auto_vacuum')).toBe(2);
      for (let batch = 0; batch < 20; batch++) await stores.requestLogs.insertBatch(wideRows(TODAY - 30 * DAY + batch * 1_000, 500));
      const full = pragma(stores, 'page_count');
      const retention = requestLogRetention(stores.database, { retentionMs: RETENTION, now: () => NOW });
      const pass = await retention.prune();
      expect(pass.rowsDeleted).toBe(10_000);
      expect(pass.pagesFreed).toBeGreaterThan(full / 2);
      expect(pragma(stores, 'freelist_count')).toBe(0);
      expect(pragma(stores, 'page_count')).toBeLessThan(full / 2);

      // Rows come and go as days pass: the file stays the size of what is kept.
      for (let round = 1; round <= 3; round++) {
        for (let batch = 0; batch < 20; batch++) await stores.requestLogs.insertBatch(wideRows(TODAY - 30 * DAY + round * DAY + batch * 1_000, 500));
        await retention.prune();
        expect(pragma(stores, 'page_count')).toBeLessThan(full / 2);
      }
    } finally {
      await stores.close();
    }
  });

  it('in a database made before incremental vacuum, reuses the free pages; prune --vacuum turns it on', async () => {
    const old = await migrateUpTo(url, '0014');
    await old.destroy();
    const stores = await openStores(url);
    try {
      expect(pragma(stores, 'auto_vacuum')).toBe(0);
      for (let batch = 0; batch < 20; batch++) await stores.requestLogs.insertBatch(wideRows(TODAY - 30 * DAY + batch * 1_000, 500));
      const full = pragma(stores, 'page_count');
      const retention = requestLogRetention(stores.database, { retentionMs: RETENTION, now: () => NOW });
      const pass = await retention.prune();
      expect(pass).toMatchObject({ rowsDeleted: 10_000, pagesFreed: 0 });
      expect(pragma(stores, 'freelist_count')).toBeGreaterThan(full / 2);
      // New rows take the free pages: the file does not grow.
      for (let batch = 0; batch < 20; batch++) await stores.requestLogs.insertBatch(wideRows(TODAY - 29 * DAY + batch * 1_000, 500));
      expect(pragma(stores, 'page_count')).toBeLessThanOrEqual(full * 1.05);

      await retention.prune();
      const vacuumed = vacuumSqlite(stores.database);
      expect(vacuumed.bytesAfter).toBeLessThan(vacuumed.bytesBefore / 2);
      expect(pragma(stores, 'auto_vacuum')).toBe(2);
      for (let batch = 0; batch < 20; batch++) await stores.requestLogs.insertBatch(wideRows(TODAY - 28 * DAY + batch * 1_000, 500));
      expect((await retention.prune()).pagesFreed).toBeGreaterThan(full / 2);
      expect(pragma(stores, 'freelist_count')).toBe(0);
    } finally {
      await stores.close();
    }
  });
});
