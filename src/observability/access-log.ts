import pino from 'pino';
import type { RequestLogEntry } from '../store/index.js';
import type { RequestRecord } from '../usage/index.js';

/** The part of the root logger the access log uses: the failed attempts' `warn` lines, its level, and its output. */
export interface AccessLogger {
  warn(object: object, message: string): void;
  isLevelEnabled(level: string): boolean;
  /** The fields on every line (`service`, and a worker's `worker`). */
  bindings(): Record<string, unknown>;
}

/** What pino writes to: the access line goes there too, so that it is ordered with every other line. */
interface LineOutput {
  write(line: string): unknown;
}

const INFO = 30;

/**
 * The log lines of a finished `/v1` request, on stdout with every other log line: one `warn` per
 * upstream attempt that failed (the credential and the cause, which callers are never told), and
 * one `info` access line (`logging.access: false` turns those off). Never the token's secret:
 * its id and team.
 *
 * The access line is the one line written per request, so it is built here rather than by pino:
 * its fields are fixed, and none is a path pino's redaction censors (they are ids, names, numbers
 * and the request line without its query), so redaction, which pino runs over every line it
 * writes, would find nothing in it at a cost of about a fifth of a request's CPU
 * (docs/performance.md). The line is what pino would write: the same keys, in the same order, with
 * `level`, `time`, `service` and `msg`.
 */
export function accessLog(logger: AccessLogger, accessLines: boolean): (entry: RequestLogEntry, record: RequestRecord) => void {
  const output = outputOf(logger);
  const base = baseFields(logger.bindings());
  return (entry, record) => {
    if (record.upstreamFailures !== null) {
      for (const failure of record.upstreamFailures) {
        logger.warn(
          { requestId: entry.id, credential: failure.upstream, code: failure.code, class: failure.failureClass, status: failure.status, cause: failure.cause },
          'upstream attempt failed',
        );
      }
    }
    if (!accessLines || !logger.isLevelEnabled('info')) return;
    output.write(accessLine(entry, record, Date.now(), base));
  };
}

/** The logger's own fields as they stand in a line (`"service":"switchyard"`, then a worker's `"worker":2`). */
export function baseFields(bindings: Record<string, unknown>): string {
  return JSON.stringify(bindings).slice(1, -1);
}

const SERVICE_ONLY = baseFields({ service: 'switchyard' });

/** One access line, newline included; `base` as `baseFields` gives it. */
export function accessLine(entry: RequestLogEntry, record: RequestRecord, time: number, base = SERVICE_ONLY): string {
  const query = record.path.indexOf('?');
  return (
    `{"level":${INFO},"time":${time},${base},"requestId":${text(entry.id)}` +
    (entry.clientRequestId === null ? '' : `,"clientRequestId":${text(entry.clientRequestId)}`) +
    `,"client":${text(record.clientAddress)},"method":${text(record.method)},"path":${text(query === -1 ? record.path : record.path.slice(0, query))}` +
    `,"status":${entry.status},"errorCode":${text(entry.errorCode)},"model":${text(entry.model)},"tokenId":${text(entry.tokenId)}` +
    `,"team":${text(entry.team)},"project":${text(entry.project)},"sessionId":${text(entry.sessionId)},"credential":${text(entry.upstream)}` +
    `,"upstreamModel":${text(entry.upstreamModel)},"latencyMs":${entry.latencyMs},"firstByteMs":${number(entry.ttfbMs)}` +
    `,"promptTokens":${number(entry.promptTokens)},"completionTokens":${number(entry.completionTokens)},"usageSource":${text(entry.usageSource)}` +
    `,"msg":"request"}\n`
  );
}

/**
 * The value as a JSON string, as `JSON.stringify` writes it. Most values (ids, names, addresses)
 * need no escape and are quoted as they are: `JSON.stringify` per field was about a tenth of the
 * line's instructions. A quote, a backslash, a control character or a surrogate (which
 * `JSON.stringify` escapes when it stands alone) sends the value to `JSON.stringify`.
 */
function text(value: string | null): string {
  if (value === null) return 'null';
  for (let index = 0; index < value.length; index++) {
    const code = value.charCodeAt(index);
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return JSON.stringify(value);
  }
  return `"${value}"`;
}

function number(value: number | null): string {
  return value === null ? 'null' : String(value);
}

/** The stream pino writes to (a test's, or the gateway's stdout or file). */
function outputOf(logger: AccessLogger): LineOutput {
  const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym];
  if (typeof stream !== 'object' || stream === null || typeof (stream as Partial<LineOutput>).write !== 'function') {
    throw new Error('the access log needs a pino logger: its output stream is where access lines go');
  }
  return stream as LineOutput;
}
