/** Edit distance (insertions, deletions, substitutions, swaps of neighbours) between two short names. */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = rows[i] as number[];
      const above = rows[i - 1] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, (above[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      row[j] = best;
    }
  }
  return (rows[a.length] as number[])[b.length] as number;
}

/** Case and separators (`-`, `_`, `.`, `/`, `:`, spaces) do not tell model names apart for a reader. */
const looseForm = (name: string): string => name.toLowerCase().replace(/[-_./:\s]/g, '');

/**
 * The known names a mistyped one was probably meant to be, closest first, at most `limit`: those
 * equal but for case and separators, within a few edits (a quarter of the name's length, at least
 * two), or that start with it or it with them (`gpt-4o` for `gpt-4o-2024-08-06`).
 */
export function closestNames(wanted: string, known: Iterable<string>, limit = 3): string[] {
  const loose = looseForm(wanted);
  if (loose === '' || wanted.length > 256) return [];
  const bound = Math.max(2, Math.floor(loose.length / 4));
  const scored: { name: string; score: number }[] = [];
  for (const name of new Set(known)) {
    const other = looseForm(name);
    if (other === '') continue;
    const distance = editDistance(loose, other);
    const prefix = other.startsWith(loose) || loose.startsWith(other);
    if (distance <= bound || prefix) scored.push({ name, score: prefix ? Math.min(distance, bound + 1) : distance });
  }
  return scored
    .sort((left, right) => left.score - right.score || left.name.localeCompare(right.name))
    .slice(0, limit)
    .map((entry) => entry.name);
}
