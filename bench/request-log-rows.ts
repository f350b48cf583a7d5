import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openBuiltStores, option, type SeedRow } from './request-log-bench-db.js';
import { alignedTable } from './cpu-window.js';

/**
 * What a request-log row costs to write (issue 32, docs/performance.md: "Where the request log's
 * time goes"): CPU µs per row of the built store's `insertBatch`, into a fresh SQLite database
 * with the real schema, for rows whose session ids spread over 1 session, 500 sessions, or a new
 * one per row (and over 500 without the session index), in batches of 100
 * (`request_log.batch_size`'s default) and 1,000. Each case writes
 * 30,000 rows, then measures the next 30,000, so the indexes are past their first pages.
 *
 *   npm run bench:request-log-rows [-- --rows N]
 */

const SPREADS: ReadonlyArray<{ label: string; sessions: number | null; withoutSessionIndex?: boolean }> = [
  { label: '1 session', sessions: 1 },
  { label: '500 sessions', sessions: 500 },
  { label: 'a session per row', sessions: null },
  // What the session index costs: the same rows with it dropped.
  { label: '500 sessions, no session index', sessions: 500, withoutSessionIndex: true },
];
const BATCHES = [100, 1_000];

function rows(count: number, sessions: number | null, start: number): SeedRow[] {
  const made: SeedRow[] = [];
  for (let index = start; index < start + count; index++) {
    made.push({
      id: `req_${String(Date.now()).padStart(14, '0')}${String(index).padStart(10, '0')}`,
      clientRequestId: null,
      createdAt: Date.now(),
      tokenId: 'tok_bench_rows',
      team: 'bench-team',
      project: 'bench-project',
      endpoint: '/v1/chat/completions',
      model: 'gpt-4o-mini',
      upstream: 'openai-main',
      upstreamModel: 'gpt-4o-mini',
      sessionId: `inferred_${sessions === null ? index : index % sessions}_0123456789abcdef`,
      status: 200,
      latencyMs: 12.5,
      ttfbMs: 11.25,
      promptTokens: 10,
      completionTokens: 20,
      cachedTokens: 0,
      reasoningTokens: 0,
      costUsd: 0.0001,
      usageSource: 'upstream',
      errorCode: null,
      sessionSource: 'inferred',
      affinity: 'new',
      attempts: null,
    });
  }
  return made;
}

async function microsecondsPerRow(spread: (typeof SPREADS)[number], batch: number, count: number): Promise<number> {
  const { sessions } = spread;
  const directory = mkdtempSync(join(tmpdir(), 'switchyard-bench-rows-'));
  const stores = await openBuiltStores(`sqlite:${join(directory, 'switchyard.db')}`);
  try {
    if (spread.withoutSessionIndex === true) stores.database.sqlite?.exec('drop index request_logs_session_index');
    const write = async (start: number): Promise<void> => {
      for (let offset = 0; offset < count; offset += batch)
        await stores.requestLogs.insertBatch(rows(Math.min(batch, count - offset), sessions, start + offset));
    };
    await write(0);
    // The rows are made outside the measured window: only the store's work is counted.
    const measured: SeedRow[][] = [];
    for (let offset = 0; offset < count; offset += batch) measured.push(rows(Math.min(batch, count - offset), sessions, count + offset));
    const before = process.cpuUsage();
    for (const rowsOfBatch of measured) await stores.requestLogs.insertBatch(rowsOfBatch);
    const used = process.cpuUsage(before);
    return (used.user + used.system) / count;
  } finally {
    await stores.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

const count = Number(option(process.argv, 'rows') ?? 30_000);
if (!Number.isSafeInteger(count) || count <= 0) throw new Error(`--rows: a positive integer, got ${String(option(process.argv, 'rows'))}`);
const table: string[][] = [['session ids', ...BATCHES.map((batch) => `batches of ${batch}`)]];
for (const spread of SPREADS) {
  const cells = [spread.label];
  for (const batch of BATCHES) cells.push(`${(await microsecondsPerRow(spread, batch, count)).toFixed(1)} µs`);
  table.push(cells);
}
process.stdout.write(`CPU per request-log row (SQLite, the built store's insertBatch, ${count} rows measured after ${count} written)\n`);
process.stdout.write(`${alignedTable(table, 1)}\n`);
