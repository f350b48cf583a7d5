import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayError } from '../../src/errors/index.js';
import { classifyAnswer, type ErrorDialect } from '../../src/providers/shared/classify-upstream-failure.js';

/**
 * A provider's error mapping as its callers meet it: its dialect read through the one classifier,
 * which is what the upstream client's `postJson`, `openEvents`… do with an error answer.
 */
export function errorMapping(
  dialect: ErrorDialect,
): (status: number, bodyText: string, headers: IncomingHttpHeaders | undefined, upstreamId: string) => GatewayError {
  return (status, bodyText, headers, upstreamId) => classifyAnswer(status, headers, bodyText, upstreamId, dialect);
}
