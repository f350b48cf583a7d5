import type { RequestView } from '../api/types';

/**
 * Folds a fresh first page into the rows shown: new rows go in (newest first, by id, which
 * begins with the time), changed rows are replaced, and every other row keeps its object so
 * memoised rows do not re-render. When the fresh page does not reach the rows shown (more new
 * requests than a page since the last poll) the rows shown would leave a gap: the fresh page
 * replaces them, and its cursor is the one to follow.
 */
export function mergeFirstPage(
  current: readonly RequestView[],
  fresh: readonly RequestView[],
  freshHasMore: boolean,
): { rows: RequestView[]; replaced: boolean; changed: boolean } {
  const byId = new Map(current.map((row) => [row.id, row]));
  const overlaps = fresh.some((row) => byId.has(row.id));
  if (!overlaps && freshHasMore && current.length > 0) return { rows: [...fresh], replaced: true, changed: true };

  let changed = false;
  const freshById = new Map<string, RequestView>();
  for (const row of fresh) {
    const known = byId.get(row.id);
    if (known !== undefined && JSON.stringify(known) === JSON.stringify(row)) continue;
    freshById.set(row.id, row);
    changed = true;
  }
  if (!changed) return { rows: current as RequestView[], replaced: false, changed: false };

  const rows = current.map((row) => freshById.get(row.id) ?? row);
  const added = [...freshById.values()].filter((row) => !byId.has(row.id));
  const merged = added.length === 0 ? rows : [...added, ...rows].sort((left, right) => (left.id < right.id ? 1 : left.id > right.id ? -1 : 0));
  return { rows: merged, replaced: false, changed: true };
}
