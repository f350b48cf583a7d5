import type { RequestRecord } from '../usage/index.js';
import type { HeaderList } from './send-response.js';

/**
 * The headers a response carries from its record: the caller's `x-ratelimit-*` (set when its
 * limits admitted it), and `X-Session-Id`, `X-Session-Source` and `X-Session-Affinity` of a
 * routed response, from what the service noted; nothing else for a request without a session.
 */
export function appendSessionHeaders(headers: HeaderList, record: RequestRecord): HeaderList {
  const { limitHeaders } = record;
  if (limitHeaders !== null) for (const header of limitHeaders) headers.push(header);
  if (record.sessionId === null) return headers;
  headers.push('x-session-id', record.sessionId, 'x-session-source', record.sessionSource ?? 'header');
  if (record.affinity !== null) headers.push('x-session-affinity', record.affinity);
  return headers;
}

/** The same headers as an object, for responses Fastify writes. */
export function sessionHeaders(record: RequestRecord): Record<string, string> {
  const list = appendSessionHeaders([], record);
  const headers: Record<string, string> = {};
  for (let index = 0; index < list.length; index += 2) headers[list[index] as string] = list[index + 1] as string;
  return headers;
}
