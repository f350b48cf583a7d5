import type { EventEmitter } from 'node:events';
import { errorSummary } from './error-summary.js';

export interface GuardLogger {
  error(object: object, message: string): void;
}

/**
 * The last line of defence of a serving process: an exception nobody caught, or a promise
 * rejection nobody handled, is logged with its stack and the gateway keeps serving. Such an error
 * is a bug in request-scoped work (a listener, a callback after a response); exiting would cut
 * every other stream in flight and lose the queued request-log rows for the sake of one request.
 * The error is logged as its type, message, code and stack only: whatever else hangs off it (a pg
 * client with the backend's cancel key, a socket) stays out of the log.
 * Returns a function that removes the guard.
 */
export function guardProcess(logger: GuardLogger, target: EventEmitter = process): () => void {
  const onException = (error: unknown, origin: unknown): void => {
    logger.error({ err: errorSummary(error, true), origin }, 'uncaught exception (a bug: please report it with this log line); still serving');
  };
  const onRejection = (reason: unknown): void => {
    logger.error({ err: errorSummary(reason, true) }, 'unhandled promise rejection (a bug: please report it with this log line); still serving');
  };
  target.on('uncaughtException', onException);
  target.on('unhandledRejection', onRejection);
  return () => {
    target.off('uncaughtException', onException);
    target.off('unhandledRejection', onRejection);
  };
}
