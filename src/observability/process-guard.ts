import type { EventEmitter } from 'node:events';

export interface GuardLogger {
  error(object: object, message: string): void;
}

/**
 * The last line of defence of a serving process: an exception nobody caught, or a promise
 * rejection nobody handled, is logged with its stack and the gateway keeps serving. Such an error
 * is a bug in request-scoped work (a listener, a callback after a response); exiting would cut
 * every other stream in flight and lose the queued request-log rows for the sake of one request.
 * Returns a function that removes the guard.
 */
export function guardProcess(logger: GuardLogger, target: EventEmitter = process): () => void {
  const onException = (error: unknown, origin: unknown): void => {
    logger.error({ err: error, origin }, 'uncaught exception (a bug: please report it with this log line); still serving');
  };
  const onRejection = (reason: unknown): void => {
    logger.error({ err: reason }, 'unhandled promise rejection (a bug: please report it with this log line); still serving');
  };
  target.on('uncaughtException', onException);
  target.on('unhandledRejection', onRejection);
  return () => {
    target.off('uncaughtException', onException);
    target.off('unhandledRejection', onRejection);
  };
}
