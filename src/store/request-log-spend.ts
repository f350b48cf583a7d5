import { sql, type Kysely } from 'kysely';
import type { DatabaseSchema } from './database-schema.js';

/** Which rows count: a token's, a team's, or a project's of a team. */
export interface SpendFilter {
  tokenId?: string;
  team?: string;
  project?: string;
}

/** The lowest request id of a millisecond: ids start with `req_` and 12 hex digits of the time they were made. */
function firstIdAt(timeMs: number): string {
  return `req_${Math.max(0, Math.floor(timeMs)).toString(16).padStart(12, '0')}`;
}

/**
 * What the request log shows spent by a token, team or project between two times: prompt +
 * completion tokens and dollars. The range is an id range on the primary key (ids are
 * time-ordered), so a month of one token is read through its `(token_id, id)` index.
 */
export async function spentBetween(db: Kysely<DatabaseSchema>, filter: SpendFilter, fromMs: number, toMs: number): Promise<{ tokens: number; usd: number }> {
  let query = db
    .selectFrom('request_logs')
    .select([
      sql<number | string | null>`sum(coalesce(prompt_tokens, 0) + coalesce(completion_tokens, 0))`.as('tokens'),
      sql<number | string | null>`sum(coalesce(cost_usd, 0))`.as('usd'),
    ])
    .where('id', '>=', firstIdAt(fromMs))
    .where('id', '<', firstIdAt(toMs));
  if (filter.tokenId !== undefined) query = query.where('token_id', '=', filter.tokenId);
  if (filter.team !== undefined) query = query.where('team', '=', filter.team);
  if (filter.project !== undefined) query = query.where('project', '=', filter.project);
  const row = await query.executeTakeFirst();
  return { tokens: Number(row?.tokens ?? 0), usd: Number(row?.usd ?? 0) };
}
