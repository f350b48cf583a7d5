import { setTimeout as sleep } from 'node:timers/promises';
import { MAX_PAGE_SIZE } from '../access/list-page.js';
import { statusRange } from '../admin/query-values.js';
import { RequestQueries, requestView } from '../admin/request-queries.js';
import type { RequestListQuery, RequestView } from '../admin/request-schemas.js';
import type { RequestLogQuery, StoredRequestLogEntry } from '../store/index.js';
import { CliFailure, EXIT_USAGE, type CliIo } from './cli-io.js';
import { refusalsAsFailures } from './cli-errors.js';
import { withStores, type ConfigOption } from './cli-stores.js';
import { printTable } from './print-table.js';
import { RequestFollower } from './request-follower.js';

export interface RequestFilterOptions extends ConfigOption {
  session?: string;
  status?: string;
  token?: string;
  json?: boolean;
}

export interface ListOptions extends RequestFilterOptions {
  limit?: string;
  team?: string;
  project?: string;
  model?: string;
  /** ISO 8601, as the admin API takes them. */
  from?: string;
  to?: string;
}

export interface TailOptions extends RequestFilterOptions {
  lines?: string;
  interval?: string;
}

/** The newest requests first, as a table or (`--json`) an array: the admin API's list, page after page. */
export async function listRequestsCommand(options: ListOptions, io: CliIo): Promise<number> {
  const count = positiveInteger('--limit', options.limit, 20);
  // Checked here too, so that a bad flag is told in the flag's words before the database is opened.
  if (options.status !== undefined) parseStatus(options.status);
  const query: RequestListQuery = {};
  if (options.session !== undefined) query.session_id = options.session;
  if (options.token !== undefined) query.token_id = options.token;
  if (options.status !== undefined) query.status = options.status;
  if (options.team !== undefined) query.team = options.team;
  if (options.project !== undefined) query.project = options.project;
  if (options.model !== undefined) query.model = options.model;
  if (options.from !== undefined) query.from = options.from;
  if (options.to !== undefined) query.to = options.to;
  // The admin API's own checks (times, status), refused with its words and exit 64.
  const rows = await withStores(options, io, (stores) => refusalsAsFailures(() => newest(new RequestQueries(stores.requestSearch), query, count)));
  if (options.json === true) {
    io.stdout(JSON.stringify(rows, null, 2));
    return 0;
  }
  const header = ['TIME', 'REQUEST', 'STATUS', 'ENDPOINT', 'MODEL', 'TEAM', 'TOKEN', 'SESSION', 'UPSTREAM', 'LATENCY', 'TTFB', 'TOKENS', 'ERROR'];
  printTable(header, rows.map(tableRow), io);
  if (rows.length === 0) io.stderr('no requests match');
  return 0;
}

/**
 * The last `--lines` requests, then each request as its row is written, until `signal` aborts
 * (SIGINT/SIGTERM). One line per request, `key=value`, or (`--json`) one JSON object per line.
 */
export async function tailRequestsCommand(options: TailOptions, io: CliIo, signal: AbortSignal): Promise<number> {
  const filter = parseFilter(options, positiveInteger('--lines', options.lines, 10));
  const intervalMs = positiveInteger('--interval', options.interval, 1_000);
  const print = (row: StoredRequestLogEntry) => io.stdout(options.json === true ? JSON.stringify(requestView(row)) : tailLine(requestView(row)));
  await withStores(options, io, async (stores) => {
    const follower = new RequestFollower(stores.requestLogs, { ...filter, limit: 1_000 });
    // Rows written just before the start are not news unless they are among the last `--lines`:
    // the first poll marks them seen and prints none of them.
    await follower.poll(Date.now());
    const backlog = await stores.requestLogs.query(filter);
    follower.markSeen(backlog);
    for (const row of backlog.reverse()) print(row);
    while (!signal.aborted) {
      await sleep(intervalMs, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) break;
      for (const row of await follower.poll(Date.now())) print(row);
    }
  });
  return 0;
}

/** Up to `count` of the newest requests matching `query`, read a page at a time. */
async function newest(queries: RequestQueries, query: RequestListQuery, count: number): Promise<RequestView[]> {
  const rows: RequestView[] = [];
  let cursor: string | undefined;
  do {
    const page = await queries.list({ ...query, limit: Math.min(MAX_PAGE_SIZE, count - rows.length), ...(cursor === undefined ? {} : { cursor }) });
    rows.push(...page.data);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined && rows.length < count);
  return rows;
}

function parseFilter(options: RequestFilterOptions, limit: number): RequestLogQuery {
  const filter: RequestLogQuery = { limit };
  if (options.session !== undefined) filter.sessionId = options.session;
  if (options.token !== undefined) filter.tokenId = options.token;
  if (options.status !== undefined) filter.status = parseStatus(options.status);
  return filter;
}

/** `429` is that status; `5xx` (or `5XX`) is every status of the class. */
export function parseStatus(value: string): { from: number; to: number } {
  const range = statusRange(value);
  if (range !== null) return range;
  throw new CliFailure(`--status: expected a status such as 429 or a class such as 5xx, got "${value}"`, EXIT_USAGE);
}

function positiveInteger(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < 1 || parsed > 100_000) {
    throw new CliFailure(`${flag}: expected a whole number from 1 to 100000, got "${value}"`, EXIT_USAGE);
  }
  return parsed;
}

function tableRow(row: RequestView): string[] {
  return [
    row.created_at,
    row.id,
    String(row.status),
    row.endpoint,
    row.model ?? '-',
    row.team ?? '-',
    row.token_id ?? '-',
    row.session_id ?? '-',
    row.upstream ?? '-',
    `${row.latency_ms}ms`,
    row.ttfb_ms === null ? '-' : `${row.ttfb_ms}ms`,
    tokens(row),
    row.error_code ?? '-',
  ];
}

function tailLine(view: RequestView): string {
  const fields: string[] = [view.created_at, view.id, String(view.status), view.endpoint];
  const pairs: [string, string | number | null][] = [
    ['model', view.model],
    ['team', view.team],
    ['token', view.token_id],
    ['session', view.session_id],
    ['upstream', view.upstream],
    ['latency_ms', view.latency_ms],
    ['ttfb_ms', view.ttfb_ms],
    ['tokens', tokens(view)],
    ['error', view.error_code],
  ];
  for (const [key, value] of pairs) if (value !== null && value !== '-') fields.push(`${key}=${quote(String(value))}`);
  return fields.join(' ');
}

function tokens(row: RequestView): string {
  if (row.prompt_tokens === null && row.completion_tokens === null) return '-';
  return `${row.prompt_tokens ?? 0}/${row.completion_tokens ?? 0}`;
}

/** logfmt: a value with a space, quote or `=` is quoted, so each line splits back into its fields. */
function quote(value: string): string {
  return /[\s"=]/.test(value) ? JSON.stringify(value) : value;
}
