import { builtQueries, openBuiltStores, option, RARE_MODEL, say, type BuiltQueries } from './request-log-bench-db.js';
import { percentile, timedRuns } from './timed-runs.js';

/**
 * Times the admin API's request-log queries (the service the routes call, on the built gateway)
 * on a log filled by bench/seed-request-log.ts:
 *
 *   node dist-bench/request-log-queries.js --database sqlite:/tmp/request-log.db [--runs 15]
 *
 * Targets are taken from the log itself (a request a week before the newest: its session, token,
 * team and project), so any seeded log will do. Each query runs `--warmup` times, then `--runs`
 * times; the table gives the median, the 90th percentile and the worst, in milliseconds. The
 * issue's requirement (first page under 100 ms) is on the rows marked "required".
 */

interface Row {
  id: string;
  created_at: string;
  session_id: string | null;
  token_id: string | null;
  team: string | null;
  project: string | null;
}

interface Case {
  name: string;
  required: boolean;
  run(): Promise<number>;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const iso = (milliseconds: number) => new Date(milliseconds).toISOString();

/** The cursor of page `page` (1-based) of a list, read page by page: what a client holds when it asks for it. */
async function cursorOfPage(queries: BuiltQueries, query: Record<string, unknown>, page: number): Promise<string | null> {
  let cursor: string | null = null;
  for (let index = 1; index < page; index++) {
    cursor = (await queries.list({ ...query, ...(cursor === null ? {} : { cursor }) })).next_cursor;
    if (cursor === null) return null;
  }
  return cursor;
}

async function cases(queries: BuiltQueries): Promise<Case[]> {
  const [newest] = (await queries.list({ limit: 1 })).data as Row[];
  if (newest === undefined) throw new Error('the request log is empty: run seed-request-log first');
  const end = Date.parse(newest.created_at);
  const sample = (await queries.list({ to: iso(end - 7 * DAY), limit: 500 })).data as Row[];
  // Of the sample's sessions, the longest: the most turns to read.
  let target: Row | undefined;
  let turns = 0;
  for (const row of sample) {
    if (row.session_id === null || row.project === null) continue;
    const length = (await queries.session(row.session_id, { limit: 1_000 })).turns.length;
    if (length > turns) [target, turns] = [row, length];
  }
  if (target === undefined || target.token_id === null || target.session_id === null || target.team === null)
    throw new Error('no sample request with a session, token and team');
  const { id, session_id: session, token_id: token, team, project } = target;
  const middle = end - 7 * DAY;
  const page = (query: Record<string, unknown>) => async () => (await queries.list(query)).data.length;
  const tokenPage20 = await cursorOfPage(queries, { token_id: token }, 20);
  say(`targets: session ${session} (${turns} turns), token ${token}, team ${team}, project ${String(project)}, around ${iso(middle)}`);
  return [
    { name: `session id (${session})`, required: true, run: page({ session_id: session }) },
    { name: 'session turns, oldest first (GET /sessions/{id})', required: true, run: async () => (await queries.session(session, {})).turns.length },
    { name: `token (${token})`, required: true, run: page({ token_id: token }) },
    { name: 'token, page 20 (cursor)', required: false, run: page({ token_id: token, ...(tokenPage20 === null ? {} : { cursor: tokenPage20 }) }) },
    { name: 'time range: one hour a week ago', required: true, run: page({ from: iso(middle - HOUR), to: iso(middle) }) },
    { name: 'time range: one day a week ago', required: true, run: page({ from: iso(middle - DAY), to: iso(middle) }) },
    { name: 'time range: the last 30 days', required: true, run: page({ from: iso(end - 30 * DAY), to: iso(end + 1) }) },
    { name: 'token and one day', required: true, run: page({ token_id: token, from: iso(middle - DAY), to: iso(middle) }) },
    { name: 'newest, no filter', required: false, run: page({}) },
    { name: `team (${team})`, required: false, run: page({ team }) },
    { name: `team and project (${String(project)})`, required: false, run: page(project === null ? { team } : { team, project }) },
    { name: 'model (gpt-4o)', required: false, run: page({ model: 'gpt-4o' }) },
    { name: `model, rare (${RARE_MODEL}, 0.05%)`, required: false, run: page({ model: RARE_MODEL }) },
    { name: 'status 5xx', required: false, run: page({ status: '5xx' }) },
    { name: 'one request by id', required: false, run: async () => ((await queries.get(id)).id === id ? 1 : 0) },
    {
      name: 'usage: per day by team, 30 days',
      required: false,
      run: async () => (await queries.usage({ bucket: 'day', group_by: 'team', from: iso(end - 30 * DAY), to: iso(end + 1) })).data.length,
    },
    {
      name: 'usage: per hour by model, one day',
      required: false,
      run: async () => (await queries.usage({ bucket: 'hour', group_by: 'model', from: iso(middle - DAY), to: iso(middle) })).data.length,
    },
  ];
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const url = option(argv, 'database');
  if (url === undefined) throw new Error('usage: request-log-queries --database sqlite:PATH|postgres://…/NAME [--runs N] [--warmup N]');
  const runs = Number(option(argv, 'runs') ?? 15);
  const warmup = Number(option(argv, 'warmup') ?? 3);
  const stores = await openBuiltStores(url);
  try {
    const total = await stores.requestLogs.count();
    const queries = await builtQueries(stores);
    const lines = [
      `${stores.database.dialect}, ${total.toLocaleString('en')} rows, node ${process.version}, ${new Date().toISOString().slice(0, 10)}; ${runs} runs after ${warmup} warm-up`,
      '',
      '| query | rows | median ms | p90 ms | max ms | < 100 ms required |',
      '|---|---:|---:|---:|---:|---|',
    ];
    for (const item of await cases(queries)) {
      const { rows, times } = await timedRuns(item.run, warmup, runs);
      const median = percentile(times, 0.5);
      const verdict = item.required ? (median < 100 ? 'yes: met' : 'yes: **missed**') : '';
      lines.push(
        `| ${item.name} | ${rows} | ${median.toFixed(2)} | ${percentile(times, 0.9).toFixed(2)} | ${(times.at(-1) ?? Number.NaN).toFixed(2)} | ${verdict} |`,
      );
      say(lines.at(-1) ?? '');
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await stores.close();
  }
}

await main();
