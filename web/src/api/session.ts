import { apiCall } from './http';
import type { ConsoleSession, SessionProbe } from './console-types';

const PATH = '/admin/v1/console/session';

/** Trades an admin token for the cookie session; the token goes in this one header and nowhere else. */
export function createSession(adminToken: string): Promise<ConsoleSession> {
  return apiCall<ConsoleSession>('POST', PATH, { headers: { authorization: `Bearer ${adminToken}` }, expectUnauthorized: true });
}

/** The session of the cookie, if any: how a reload gets its CSRF token back. No session is an answer, not an error. */
export function currentSession(signal?: AbortSignal): Promise<SessionProbe> {
  return apiCall<SessionProbe>('GET', PATH, { expectUnauthorized: true, ...(signal === undefined ? {} : { signal }) });
}

export function endSession(): Promise<{ object: 'console_session'; ended: true }> {
  return apiCall('DELETE', PATH, { expectUnauthorized: true });
}
