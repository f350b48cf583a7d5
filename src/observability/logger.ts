import { appendFileSync, closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import pino, { type Logger, type LoggerOptions } from 'pino';
import { maskSecrets } from '../core/index.js';
import { BatchedLines } from './batched-lines.js';

/** Everything that can carry a secret, wherever it appears in a log object. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers["api-key"]',
  'headers.authorization',
  'headers["x-api-key"]',
  'headers["api-key"]',
  '*.authorization',
  '*.api_key',
  '*.apiKey',
  '*.access_token',
  '*.refresh_token',
  '*.id_token',
  '*.secret',
  'api_key',
  'token',
];

/**
 * How log lines are written: gathered in batches of about 64 KB (or what a quarter of a second
 * brings) and handed to sonic-boom, which writes each batch asynchronously (batched-lines.ts).
 * With an access line per request, a write per line (even an asynchronous one, which hands each
 * write to libuv's thread pool and back) cost more CPU than anything else the gateway does for a
 * request (docs/performance.md); a line waits at most a quarter of a second before it can be read,
 * and what is gathered at exit is written then.
 */
function batchedDestination(dest: number | string, options: { mkdir?: boolean; append?: boolean } = {}): { lines: BatchedLines; target: SonicBoom } {
  const target = pino.destination({ dest, sync: false, ...options });
  const lines = new BatchedLines({
    write: (chunk) => target.write(chunk),
    flushSync: () => target.flushSync(),
    writeAtExit: (chunk) => (typeof dest === 'string' ? appendFileSync(dest, chunk) : writeAllSync(dest, chunk)),
    reopen: typeof dest === 'string' ? () => target.reopen() : undefined,
  });
  return { lines, target };
}

type SonicBoom = ReturnType<typeof pino.destination>;

/** Tries at exit, 10 ms apart, to write to a pipe that is full (its reader is slow): then the lines are dropped. */
const EXIT_WRITE_TRIES = 100;

/** Writes all of `text` to a descriptor synchronously, waiting for a full pipe (EAGAIN) a while, as sonic-boom does. */
function writeAllSync(descriptor: number, text: string): void {
  let rest = Buffer.from(text);
  let tries = 0;
  while (rest.length > 0) {
    try {
      rest = rest.subarray(writeSync(descriptor, rest));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN' || ++tries === EXIT_WRITE_TRIES) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

/**
 * The root logger. `fields` are on every line after `service` (a worker's `worker`: its number,
 * 0 for the primary of `serve --workers`).
 */
export function createLogger(level: string, destination?: pino.DestinationStream, fields: Readonly<Record<string, string | number>> = {}): Logger {
  const options: LoggerOptions = {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    // An upstream's error message may quote the key it was sent (an invalid key's answer does):
    // the paths above cannot see inside a message, so errors are masked as callers' are.
    serializers: { err: maskedError },
    base: { service: 'switchyard', ...fields },
  };
  return pino(options, destination ?? batchedDestination(1).lines);
}

/** Where the log lines go: stdout, or `logging.file`, which `reopen` opens again after logrotate moved it. */
export interface LogOutput {
  readonly stream: pino.DestinationStream;
  /** Writes what is buffered, then opens the file's path again (a new file when it was moved); nothing to do on stdout. */
  reopen(): void;
}

/** Throws (before anything is written) when the file cannot be opened for appending. */
export function logOutput(file: string | undefined): LogOutput {
  if (file === undefined) return { stream: batchedDestination(1).lines, reopen: () => undefined };
  // The asynchronous open below would report a bad path as an event once the gateway serves, with
  // nowhere to log it: a start refused with the reason is better.
  mkdirSync(dirname(file), { recursive: true });
  closeSync(openSync(file, 'a'));
  const { lines, target } = batchedDestination(file, { mkdir: true, append: true });
  // A reopen that fails (the folder removed, the disk full) must not end the process; stderr is
  // the one place left to say so.
  target.on('error', (error: Error) => process.stderr.write(`switchyard: logging.file ${file}: ${error.message}\n`));
  return { stream: lines, reopen: () => lines.reopen() };
}

/** pino's error serializer with secrets masked in every string it keeps (message, stack, causes). */
export function maskedError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  return maskStrings(pino.stdSerializers.err(error), 0);
}

function maskStrings(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return maskSecrets(value);
  if (value === null || typeof value !== 'object' || depth > 4) return value;
  if (Array.isArray(value)) return value.map((item) => maskStrings(item, depth + 1));
  const masked: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) masked[key] = maskStrings(item, depth + 1);
  return masked;
}

export type { Logger };
