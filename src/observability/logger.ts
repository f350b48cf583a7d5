import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import pino, { type Logger, type LoggerOptions } from 'pino';
import { maskSecrets } from '../core/index.js';

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
 * How log lines are written: asynchronously, and in writes of at least `minLength` bytes, or
 * whatever is there every `periodicFlush` ms, and at exit (pino flushes its destination then).
 * With an access line per request, a write per line (even an asynchronous one, which hands each
 * write to libuv's thread pool and back) cost more CPU than anything else the gateway does for a
 * request: about a tenth of it (docs/performance.md). In writes of 8 KB, about fifteen lines share
 * one; a line waits at most a quarter of a second before it can be read.
 */
const BUFFERED = { sync: false, minLength: 8_192, periodicFlush: 250 } as const;

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options: LoggerOptions = {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    // An upstream's error message may quote the key it was sent (an invalid key's answer does):
    // the paths above cannot see inside a message, so errors are masked as callers' are.
    serializers: { err: maskedError },
    base: { service: 'switchyard' },
  };
  return pino(options, destination ?? pino.destination({ dest: 1, ...BUFFERED }));
}

/** Where the log lines go: stdout, or `logging.file`, which `reopen` opens again after logrotate moved it. */
export interface LogOutput {
  readonly stream: pino.DestinationStream;
  /** Writes what is buffered, then opens the file's path again (a new file when it was moved); nothing to do on stdout. */
  reopen(): void;
}

/** Throws (before anything is written) when the file cannot be opened for appending. */
export function logOutput(file: string | undefined): LogOutput {
  if (file === undefined) return { stream: pino.destination({ dest: 1, ...BUFFERED }), reopen: () => undefined };
  // The asynchronous open below would report a bad path as an event once the gateway serves, with
  // nowhere to log it: a start refused with the reason is better.
  mkdirSync(dirname(file), { recursive: true });
  closeSync(openSync(file, 'a'));
  const stream = pino.destination({ dest: file, ...BUFFERED, mkdir: true, append: true });
  // A reopen that fails (the folder removed, the disk full) must not end the process; stderr is
  // the one place left to say so.
  stream.on('error', (error: Error) => process.stderr.write(`switchyard: logging.file ${file}: ${error.message}\n`));
  return { stream, reopen: () => stream.reopen() };
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
