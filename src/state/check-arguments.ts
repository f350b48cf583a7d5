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

export function requireCap(cap: { index: string; limit: number } | undefined): void {
  if (cap === undefined) return;
  requireString('cap.index', cap.index);
  if (!Number.isSafeInteger(cap.limit) || cap.limit <= 0) throw new TypeError(`cap.limit must be a positive integer, got ${String(cap.limit)}`);
}
