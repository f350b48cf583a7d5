import type { RequestLogEntry } from '../store/index.js';
import type { RequestRecord } from '../usage/index.js';

export interface AccessLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

/**
 * The log lines of a finished `/v1` request, on stdout with every other log line: one `warn` per
 * upstream attempt that failed (the credential and the cause, which callers are never told), and
 * one `info` access line (`logging.access: false` turns those off). Never the token's secret:
 * its id and team.
 */
export function accessLog(logger: AccessLogger, accessLines: boolean): (entry: RequestLogEntry, record: RequestRecord) => void {
  return (entry, record) => {
    if (record.upstreamFailures !== null) {
      for (const failure of record.upstreamFailures) {
        logger.warn(
          { requestId: entry.id, credential: failure.upstream, code: failure.code, class: failure.failureClass, status: failure.status, cause: failure.cause },
          'upstream attempt failed',
        );
      }
    }
    if (!accessLines) return;
    const query = record.path.indexOf('?');
    logger.info(
      {
        requestId: entry.id,
        ...(entry.clientRequestId === null ? {} : { clientRequestId: entry.clientRequestId }),
        client: record.clientAddress,
        method: record.method,
        path: query === -1 ? record.path : record.path.slice(0, query),
        status: entry.status,
        errorCode: entry.errorCode,
        model: entry.model,
        tokenId: entry.tokenId,
        team: entry.team,
        project: entry.project,
        sessionId: entry.sessionId,
        credential: entry.upstream,
        upstreamModel: entry.upstreamModel,
        latencyMs: entry.latencyMs,
        firstByteMs: entry.ttfbMs,
        promptTokens: entry.promptTokens,
        completionTokens: entry.completionTokens,
        usageSource: entry.usageSource,
      },
      'request',
    );
  };
}
