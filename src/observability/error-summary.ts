import { maskSecrets } from '../core/index.js';

/** What a log line says of an error: its own words, never the objects hanging off it (a pg client with its cancel key, a socket). */
export interface ErrorSummary {
  type: string;
  message: string;
  code?: string;
  stack?: string;
}

export function errorSummary(error: unknown, withStack: boolean): ErrorSummary {
  if (!(error instanceof Error)) return { type: typeof error, message: maskSecrets(String(error)) };
  const code = (error as { code?: unknown }).code;
  return {
    type: error.name,
    message: maskSecrets(error.message === '' && typeof code === 'string' ? code : error.message),
    ...(typeof code === 'string' ? { code } : {}),
    ...(withStack && error.stack !== undefined ? { stack: maskSecrets(error.stack) } : {}),
  };
}
