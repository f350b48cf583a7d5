import { apiCall } from './http';
import type { CreatedToken, ListPage, NewToken, Project, Team, Token, TokenChanges } from './types';

export function listTokens(cursor: string | null, signal?: AbortSignal): Promise<ListPage<Token>> {
  return apiCall('GET', '/admin/v1/tokens', { query: { limit: 100, cursor }, ...(signal === undefined ? {} : { signal }) });
}

export function createToken(body: NewToken): Promise<CreatedToken> {
  return apiCall('POST', '/admin/v1/tokens', { body });
}

export function updateToken(id: string, changes: TokenChanges): Promise<Token> {
  return apiCall('PATCH', `/admin/v1/tokens/${encodeURIComponent(id)}`, { body: changes });
}

export function revokeToken(id: string): Promise<Token> {
  return apiCall('POST', `/admin/v1/tokens/${encodeURIComponent(id)}/revoke`);
}

/** Names for the Usage page's token groups: the first 1,000 tokens (the rest show their ids). */
export async function tokenNames(signal?: AbortSignal): Promise<Map<string, string>> {
  const page = await apiCall<ListPage<Token>>('GET', '/admin/v1/tokens', { query: { limit: 1000 }, ...(signal === undefined ? {} : { signal }) });
  return new Map(page.data.flatMap((token) => (token.name === null ? [] : [[token.id, token.name] as const])));
}

/** Only for suggestions in the token form: one page of 1,000 is plenty there. */
export function listTeams(signal?: AbortSignal): Promise<ListPage<Team>> {
  return apiCall('GET', '/admin/v1/teams', { query: { limit: 1000 }, ...(signal === undefined ? {} : { signal }) });
}

export function listProjects(team: string, signal?: AbortSignal): Promise<ListPage<Project>> {
  return apiCall('GET', `/admin/v1/teams/${encodeURIComponent(team)}/projects`, { query: { limit: 1000 }, ...(signal === undefined ? {} : { signal }) });
}
