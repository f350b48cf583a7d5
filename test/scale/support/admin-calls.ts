import { request } from 'undici';

/** An admin API call with an admin token; rejects, with the answer's body, unless it is a 2xx. */
export async function adminCall(
  url: string,
  adminToken: string,
  method: 'GET' | 'POST' | 'PATCH',
  path: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const answer = await request(`${url}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await answer.body.text();
  if (answer.statusCode >= 300) throw new Error(`${method} /admin/v1${path}: ${answer.statusCode} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** A new team with these limits, and a token of it with these scopes: the token's secret. */
export async function teamToken(url: string, adminToken: string, team: string, limits: Record<string, number> = {}, scopes = ['chat']): Promise<string> {
  await adminCall(url, adminToken, 'POST', '/teams', { id: team, limits });
  return (await adminCall(url, adminToken, 'POST', '/tokens', { team, scopes })).secret as string;
}
