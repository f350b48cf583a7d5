import { setTimeout as sleep } from 'node:timers/promises';
import type { RequestLogQuery, StoredRequestLogEntry } from '../store/index.js';
import { CliFailure, EXIT_USAGE, type CliIo } from './cli-io.js';
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
}

export interface TailOptions extends RequestFilterOptions {
  lines?: string;
  interval?: string;
}

/** The newest requests first, as a table or (`--json`) an array. */
export async function listRequestsCommand(options: ListOptions, io: CliIo): Promise<number> {
  const filter = parseFilter(options, positiveInteger('--limit', options.limit, 20));
  const rows = await withStores(options, io, (stores) => stores.requestLogs.query(filter));
  if (options.json === true) {
    io.stdout(JSON.stringify(rows.map(publicView), null, 2));
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
  const print = (row: StoredRequestLogEntry) => io.stdout(options.json === true ? JSON.stringify(publicView(row)) : tailLine(row));
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

function parseFilter(options: RequestFilterOptions, limit: number): RequestLogQuery {
  const filter: RequestLogQuery = { limit };
  if (options.session !== undefined) filter.sessionId = options.session;
  if (options.token !== undefined) filter.tokenId = options.token;
  if (options.status !== undefined) filter.status = parseStatus(options.status);
  return filter;
}

/** `429` is that status; `5xx` (or `5XX`) is every status of the class. */
export function parseStatus(value: string): { from: number; to: number } {
  const exact = /^([1-5]\d\d)$/.exec(value);
  if (exact !== null) return { from: Number(exact[1]), to: Number(exact[1]) };
  const range = /^([1-5])xx$/i.exec(value);
  if (range !== null) return { from: Number(range[1]) * 100, to: Number(range[1]) * 100 + 99 };
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

/** What the log holds is safe to show: ids and names, never a secret (none is stored). */
function publicView(row: StoredRequestLogEntry) {
  return {
    id: row.id,
    client_request_id: row.clientRequestId,
    created_at: new Date(row.createdAt).toISOString(),
    endpoint: row.endpoint,
    status: row.status,
    error_code: row.errorCode,
    model: row.model,
    token_id: row.tokenId,
    team: row.team,
    project: row.project,
    session_id: row.sessionId,
    upstream: row.upstream,
    latency_ms: round(row.latencyMs),
    ttfb_ms: row.ttfbMs === null ? null : round(row.ttfbMs),
    prompt_tokens: row.promptTokens,
    completion_tokens: row.completionTokens,
    usage_source: row.usageSource,
  };
}

function tableRow(row: StoredRequestLogEntry): string[] {
  return [
    new Date(row.createdAt).toISOString(),
    row.id,
    String(row.status),
    row.endpoint,
    row.model ?? '-',
    row.team ?? '-',
    row.tokenId ?? '-',
    row.sessionId ?? '-',
    row.upstream ?? '-',
    `${round(row.latencyMs)}ms`,
    row.ttfbMs === null ? '-' : `${round(row.ttfbMs)}ms`,
    tokens(row),
    row.errorCode ?? '-',
  ];
}

function tailLine(row: StoredRequestLogEntry): string {
  const view = publicView(row);
  const fields: string[] = [view.created_at, view.id, String(view.status), view.endpoint];
  const pairs: [string, string | number | null][] = [
    ['model', view.model], ['team', view.team], ['token', view.token_id], ['session', view.session_id], ['upstream', view.upstream],
    ['latency_ms', view.latency_ms], ['ttfb_ms', view.ttfb_ms], ['tokens', tokens(row)], ['error', view.error_code],
  ];
  for (const [key, value] of pairs) if (value !== null && value !== '-') fields.push(`${key}=${quote(String(value))}`);
  return fields.join(' ');
}

function tokens(row: StoredRequestLogEntry): string {
  if (row.promptTokens === null && row.completionTokens === null) return '-';
  return `${row.promptTokens ?? 0}/${row.completionTokens ?? 0}`;
}

/** logfmt: a value with a space, quote or `=` is quoted, so each line splits back into its fields. */
function quote(value: string): string {
  return /[\s"=]/.test(value) ? JSON.stringify(value) : value;
}

function round(milliseconds: number): number {
  return Math.round(milliseconds * 10) / 10;
}
