import type { RequestView } from '../api/types';

export interface CacheLoss {
  /** Index of the turn in the list. */
  index: number;
  from: string | null;
  to: string | null;
  /** Why, in a few words: "moved from A to B", "on the same credential (A)". */
  reason: string;
}

export interface SessionSummary {
  turns: number;
  credentials: string[];
  moves: number;
  overflows: number;
  /** Whether any turn read from the upstream's prompt cache at all. */
  everCached: boolean;
  /** Whether any turn's upstream said how many tokens it read from its cache (some never do). */
  cacheReported: boolean;
  losses: Map<number, CacheLoss>;
}

/**
 * What answers "why did my conversation lose its cache": a turn whose cached tokens fell to 0
 * after a turn that had some, and whether the credential changed between them (a move starts
 * the upstream's prompt cache cold; on the same credential the upstream evicted it).
 */
export function summarise(turns: readonly RequestView[]): SessionSummary {
  const credentials: string[] = [];
  const losses = new Map<number, CacheLoss>();
  let moves = 0;
  let overflows = 0;
  let everCached = false;
  let cacheReported = false;
  let previousCached: { cached: number; upstream: string | null } | null = null;
  for (const [index, turn] of turns.entries()) {
    if (turn.upstream !== null && !credentials.includes(turn.upstream)) credentials.push(turn.upstream);
    if (turn.affinity === 'moved') moves += 1;
    if (turn.affinity === 'overflow') overflows += 1;
    // Turns without usage (errors) say nothing about the cache: compare across them.
    if (turn.cached_tokens === null) continue;
    cacheReported = true;
    if (turn.cached_tokens > 0) everCached = true;
    if (turn.cached_tokens === 0 && previousCached !== null && previousCached.cached > 0) {
      const from = previousCached.upstream;
      const to = turn.upstream;
      const reason =
        from !== to
          ? `${turn.affinity === 'overflow' ? 'overflowed' : 'moved'} from ${from ?? '?'} to ${to ?? '?'}`
          : `on the same credential (${to ?? '?'}): the upstream dropped it`;
      losses.set(index, { index, from, to, reason });
    }
    previousCached = { cached: turn.cached_tokens, upstream: turn.upstream };
  }
  return { turns: turns.length, credentials, moves, overflows, everCached, cacheReported, losses };
}
