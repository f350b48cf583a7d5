// The types already say so; these checks are for values that reach a backend untyped (parsed
// config, headers) and would otherwise be stored as an entry that never expires or a count of NaN.
// Each throws a TypeError; the backends call them inside their async methods, so callers see a
// rejection, before anything is changed.

export function requireString(name: string, value: string): void {
  if (typeof value !== 'string') throw new TypeError(`${name} must be a string, got ${typeof value}`);
}

export function requireMilliseconds(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value <= 0) throw new TypeError(`${name} must be a positive integer number of milliseconds, got ${String(value)}`);
}

export function requireAmount(amount: number): void {
  if (typeof amount !== 'number' || !Number.isFinite(amount)) throw new TypeError(`amount must be a finite number, got ${String(amount)}`);
}

export function requireListener(listener: unknown): void {
  if (typeof listener !== 'function') throw new TypeError(`listener must be a function, got ${typeof listener}`);
}

export function requireEntry(key: string, value: string, ttlMs: number): void {
  requireString('key', key);
  requireString('value', value);
  requireMilliseconds('ttlMs', ttlMs);
}

/** The argument checks of `setWithinBudget`, shared by every backend. */
export function requireBudgetedEntries(
  pool: string,
  group: string,
  entries: readonly { key: string; value: string }[],
  ttlMs: number,
  budget: { groupBytes: number; totalBytes: number },
): void {
  requireString('pool', pool);
  requireString('group', group);
  requireMilliseconds('ttlMs', ttlMs);
  if (!Array.isArray(entries) || entries.length === 0) throw new TypeError('entries must be a non-empty array');
  const keys = new Set<string>();
  for (const entry of entries) {
    requireString('key', entry.key);
    requireString('value', entry.value);
    if (keys.has(entry.key)) throw new TypeError(`entries name the key ${entry.key} twice`);
    keys.add(entry.key);
  }
  for (const [name, bytes] of [
    ['groupBytes', budget.groupBytes],
    ['totalBytes', budget.totalBytes],
  ] as const) {
    if (!Number.isSafeInteger(bytes) || bytes <= 0) throw new TypeError(`${name} must be a positive integer, got ${String(bytes)}`);
  }
}

export function requireCap(cap: { index: string; limit: number } | undefined): void {
  if (cap === undefined) return;
  requireString('cap.index', cap.index);
  if (!Number.isSafeInteger(cap.limit) || cap.limit <= 0) throw new TypeError(`cap.limit must be a positive integer, got ${String(cap.limit)}`);
}
