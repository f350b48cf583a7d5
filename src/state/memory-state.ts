import type { SharedState, WindowCount } from './shared-state.js';

export interface MemoryStateOptions {
  /** Milliseconds since the epoch; `Date.now` unless a test fixes the time. */
  now?: () => number;
  /** How often expired entries that nobody reads again are removed. */
  sweepIntervalMs?: number;
}

/**
 * Long enough that a sweep (one pass over every entry) costs nothing measurable, short enough that
 * a burst of one-off keys (sessions that never come back) is not held for long after it expires.
 */
export const DEFAULT_SWEEP_INTERVAL_MS = 30_000;

interface StoredValue {
  value: string;
  expiresAtMs: number;
}

interface StoredCounter {
  windowStartMs: number;
  current: number;
  previous: number;
  expiresAtMs: number;
}

/**
 * Shared state for a single gateway process (`state.url: memory`): two maps in this process, so
 * several gateways each count on their own. Every method is an `async` function that never awaits:
 * its whole body runs before any other call can start, which is what makes each operation atomic
 * here, while callers still get the promise a networked backend must return.
 *
 * An expired entry is never returned, and is removed the next time its key is used or, for keys
 * nobody uses again, by a sweep every `sweepIntervalMs` on an unref'd timer (it does not keep the
 * process alive; `close()` stops it). A key holds one entry however often it is written, and a
 * window counter two numbers however many windows pass.
 */
export class MemoryState implements SharedState {
  private readonly values = new Map<string, StoredValue>();
  /** Keyed by `counterId`: the window length is part of a counter's identity. */
  private readonly counters = new Map<string, StoredCounter>();
  private readonly now: () => number;
  /** Null once closed. */
  private sweeper: NodeJS.Timeout | null;

  constructor({ now = Date.now, sweepIntervalMs = DEFAULT_SWEEP_INTERVAL_MS }: MemoryStateOptions = {}) {
    requireMilliseconds('sweepIntervalMs', sweepIntervalMs);
    this.now = now;
    this.sweeper = setInterval(() => this.sweep(), sweepIntervalMs);
    this.sweeper.unref();
  }

  /**
   * Entries held, expired ones included until they are swept. For tests and diagnostics: it says
   * whether expired keys are being let go, not how many values are live.
   */
  get size(): number {
    return this.values.size + this.counters.size;
  }

  async get(key: string): Promise<string | null> {
    this.requireOpen();
    requireString('key', key);
    return live(this.values, key, this.now())?.value ?? null;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    this.requireOpen();
    requireEntry(key, value, ttlMs);
    this.values.set(key, { value, expiresAtMs: this.now() + ttlMs });
  }

  async delete(key: string): Promise<boolean> {
    this.requireOpen();
    requireString('key', key);
    const present = live(this.values, key, this.now()) !== undefined;
    this.values.delete(key);
    return present;
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<string> {
    this.requireOpen();
    requireEntry(key, value, ttlMs);
    const now = this.now();
    const existing = live(this.values, key, now);
    if (existing !== undefined) return existing.value;
    this.values.set(key, { value, expiresAtMs: now + ttlMs });
    return value;
  }

  async compareAndSet(key: string, expected: string | null, value: string, ttlMs: number): Promise<boolean> {
    this.requireOpen();
    requireEntry(key, value, ttlMs);
    if (expected !== null) requireString('expected', expected);
    const now = this.now();
    if ((live(this.values, key, now)?.value ?? null) !== expected) return false;
    this.values.set(key, { value, expiresAtMs: now + ttlMs });
    return true;
  }

  async touch(key: string, ttlMs: number): Promise<boolean> {
    this.requireOpen();
    requireString('key', key);
    requireMilliseconds('ttlMs', ttlMs);
    const now = this.now();
    const existing = live(this.values, key, now);
    if (existing === undefined) return false;
    existing.expiresAtMs = now + ttlMs;
    return true;
  }

  async addToWindow(key: string, amount: number, windowMs: number): Promise<WindowCount> {
    this.requireOpen();
    requireString('key', key);
    if (typeof amount !== 'number' || !Number.isFinite(amount)) throw new TypeError(`amount must be a finite number, got ${String(amount)}`);
    requireMilliseconds('windowMs', windowMs);
    const now = this.now();
    const id = counterId(key, windowMs);
    const stored = live(this.counters, id, now);
    // A clock that stepped back (NTP, a test) keeps counting in the window already reached rather
    // than starting an older one and losing what that window holds.
    const windowStartMs = Math.max(Math.floor(now / windowMs) * windowMs, stored?.windowStartMs ?? 0);
    let current = 0;
    let previous = 0;
    if (stored?.windowStartMs === windowStartMs) {
      ({ current, previous } = stored);
    } else if (stored?.windowStartMs === windowStartMs - windowMs) {
      previous = stored.current;
    }
    current += amount;
    // A read of a counter nobody has counted in would otherwise leave an entry per key looked up.
    if (stored !== undefined || amount !== 0) {
      // Two windows on, this window's count is neither current nor previous any more.
      this.counters.set(id, { windowStartMs, current, previous, expiresAtMs: windowStartMs + 2 * windowMs });
    }
    return { current, previous, windowStartMs, windowMs };
  }

  async close(): Promise<void> {
    if (this.sweeper !== null) clearInterval(this.sweeper);
    this.sweeper = null;
    this.values.clear();
    this.counters.clear();
  }

  private sweep(): void {
    const now = this.now();
    // Deleting the entry being visited is safe while iterating a Map.
    for (const [key, stored] of this.values) if (stored.expiresAtMs <= now) this.values.delete(key);
    for (const [id, stored] of this.counters) if (stored.expiresAtMs <= now) this.counters.delete(id);
  }

  private requireOpen(): void {
    if (this.sweeper === null) throw new Error('shared state is closed');
  }
}

/** The entry, or undefined when there is none or it has expired (which it then removes). */
function live<Entry extends { expiresAtMs: number }>(entries: Map<string, Entry>, id: string, now: number): Entry | undefined {
  const entry = entries.get(id);
  if (entry === undefined) return undefined;
  if (entry.expiresAtMs > now) return entry;
  entries.delete(id);
  return undefined;
}

/** The window length first: digits never contain the separator, so no two (key, length) pairs collide. */
function counterId(key: string, windowMs: number): string {
  return `${windowMs}:${key}`;
}

function requireEntry(key: string, value: string, ttlMs: number): void {
  requireString('key', key);
  requireString('value', value);
  requireMilliseconds('ttlMs', ttlMs);
}

// The types already say so; these checks are for values that reach here untyped (parsed config,
// headers) and would otherwise be stored as an entry that never expires or a count of NaN.
function requireString(name: string, value: string): void {
  if (typeof value !== 'string') throw new TypeError(`${name} must be a string, got ${typeof value}`);
}

function requireMilliseconds(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value <= 0) throw new TypeError(`${name} must be a positive integer number of milliseconds, got ${String(value)}`);
}
