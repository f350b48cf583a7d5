/**
 * Whether an error thrown by a database driver means the database is away rather than that the
 * gateway has a bug: the answer is then 503 `database_unavailable`, not 500 `internal_error`.
 * Read from the drivers' stable codes (PostgreSQL's SQLSTATE, SQLite's result codes, Node's socket
 * errors) and the few pg messages that carry none, since errors/ may import no driver.
 */
export function isDatabaseOutage(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 4; current = current.cause, depth++) {
    if (isOutageCode((current as { code?: unknown }).code) || PG_OUTAGE_MESSAGES.some((pattern) => pattern.test(current.message))) return true;
    if (current instanceof AggregateError && current.errors.some((inner) => isDatabaseOutage(inner))) return true;
  }
  return false;
}

const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** Messages pg gives errors of its own, without a code: a connection lost, an answer or a free connection not in time. */
const PG_OUTAGE_MESSAGES = [
  /^Connection terminated/,
  /^Query read timeout$/,
  /^timeout exceeded when trying to connect$/,
  /is not queryable$/,
  /^Client was closed and is not queryable$/,
];

function isOutageCode(code: unknown): boolean {
  if (typeof code !== 'string') return false;
  if (SOCKET_CODES.has(code)) return true;
  // SQLite: another process holds the lock; the disk is full or failing; the file cannot be opened.
  if (/^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN)/.test(code)) return true;
  // PostgreSQL SQLSTATE: 08 connection exceptions, 57P01-03 shut down or starting, 57014 statement
  // timeout, 53 insufficient resources (disk full, too many connections).
  return /^(08...|57P0[123]|57014|53...)$/.test(code);
}
