import type { RequestLogEntry } from './request-log-store.js';

export const HOUR_MS = 3_600_000;

/**
 * The four group columns of a `request_usage_hourly` row as one string, unique with the hour: a
 * unique index treats nulls as distinct on both databases (SQLite has no `NULLS NOT DISTINCT`), so
 * the key says null (`-`) apart from a value (`=` and the value), and `|` between them never occurs
 * inside one (`~` is written `~~`, `|` `~p`). `usageGroupKeySql` is the same in SQL.
 */
export function usageGroupKey(tokenId: string | null, team: string | null, project: string | null, model: string | null): string {
  return `${keyPart(tokenId)}|${keyPart(team)}|${keyPart(project)}|${keyPart(model)}`;
}

function keyPart(value: string | null): string {
  return value === null ? '-' : `=${value.replaceAll('~', '~~').replaceAll('|', '~p')}`;
}

/** `usageGroupKey` of a `request_logs` row, in SQL that SQLite and PostgreSQL read alike (the backfill's). */
export function usageGroupKeySql(): string {
  return groupKeySql(['token_id', 'team', 'project', 'model']);
}

/** The key `usageGroupKey` makes, of any of the group columns (the usage summary's dimensions), in SQL. */
export function groupKeySql(columns: readonly string[]): string {
  return columns.map((column) => `coalesce('=' || replace(replace(${column}, '~', '~~'), '|', '~p'), '-')`).join(` || '|' || `);
}

/** The hour a row counts in: that of when its request started (`created_at`), as the usage queries read it. */
export function hourOf(createdAt: number): number {
  return Math.floor(createdAt / HOUR_MS) * HOUR_MS;
}

/** One hour and group of a batch: what its upsert adds to `request_usage_hourly`. */
export interface HourlyUsage {
  hourStart: number;
  groupKey: string;
  tokenId: string | null;
  team: string | null;
  project: string | null;
  model: string | null;
  requests: number;
  errors: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  /** Null when no request of the group had a price. */
  costUsd: number | null;
}

type UsageFields = Pick<
  RequestLogEntry,
  'createdAt' | 'tokenId' | 'team' | 'project' | 'model' | 'status' | 'promptTokens' | 'completionTokens' | 'cachedTokens' | 'reasoningTokens' | 'costUsd'
>;

/**
 * A batch's rows summed per hour and group, in key order: every writer upserts its groups in the
 * same order, so two PostgreSQL transactions updating the same groups wait for each other instead
 * of deadlocking.
 */
export function hourlyUsage(entries: readonly UsageFields[]): HourlyUsage[] {
  const groups = new Map<string, HourlyUsage>();
  for (const entry of entries) {
    const hourStart = hourOf(entry.createdAt);
    const groupKey = usageGroupKey(entry.tokenId, entry.team, entry.project, entry.model);
    const key = `${hourStart}/${groupKey}`;
    let group = groups.get(key);
    if (group === undefined) {
      group = {
        hourStart,
        groupKey,
        tokenId: entry.tokenId,
        team: entry.team,
        project: entry.project,
        model: entry.model,
        requests: 0,
        errors: 0,
        promptTokens: 0,
        completionTokens: 0,
        cachedTokens: 0,
        reasoningTokens: 0,
        costUsd: null,
      };
      groups.set(key, group);
    }
    group.requests += 1;
    if (entry.status >= 400) group.errors += 1;
    group.promptTokens += entry.promptTokens ?? 0;
    group.completionTokens += entry.completionTokens ?? 0;
    group.cachedTokens += entry.cachedTokens ?? 0;
    group.reasoningTokens += entry.reasoningTokens ?? 0;
    if (entry.costUsd !== null) group.costUsd = (group.costUsd ?? 0) + entry.costUsd;
  }
  return [...groups.values()].sort((a, b) => a.hourStart - b.hourStart || (a.groupKey < b.groupKey ? -1 : a.groupKey > b.groupKey ? 1 : 0));
}

/** The upsert's `do update`: each total added to, a cost null until one of the two has one. Both dialects. */
export const ROLLUP_ON_CONFLICT = `on conflict (hour_start, group_key) do update set
  requests = request_usage_hourly.requests + excluded.requests,
  errors = request_usage_hourly.errors + excluded.errors,
  prompt_tokens = request_usage_hourly.prompt_tokens + excluded.prompt_tokens,
  completion_tokens = request_usage_hourly.completion_tokens + excluded.completion_tokens,
  cached_tokens = request_usage_hourly.cached_tokens + excluded.cached_tokens,
  reasoning_tokens = request_usage_hourly.reasoning_tokens + excluded.reasoning_tokens,
  cost_usd = coalesce(request_usage_hourly.cost_usd + excluded.cost_usd, request_usage_hourly.cost_usd, excluded.cost_usd)`;

export const ROLLUP_COLUMNS = [
  'hour_start',
  'group_key',
  'token_id',
  'team',
  'project',
  'model',
  'requests',
  'errors',
  'prompt_tokens',
  'completion_tokens',
  'cached_tokens',
  'reasoning_tokens',
  'cost_usd',
] as const;
