import pino, { type Logger, type LoggerOptions } from 'pino';

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

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options: LoggerOptions = {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: { service: 'switchyard' },
  };
  // Written asynchronously: with an access line per request, a synchronous write would put a
  // syscall on every request's path; lines that pile up while one write is in flight leave together.
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
}

export type { Logger };
