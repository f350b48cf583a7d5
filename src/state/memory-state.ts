import { callListener } from './call-listener.js';
import { requireAmount, requireBudgetedEntries, requireCap, requireEntry, requireListener, requireMilliseconds, requireString } from './check-arguments.js';
import { requireMeters } from './check-meters.js';
import { MemoryBudgets } from './memory-budgets.js';
import { MemoryMeters } from './memory-meters.js';
import type { BudgetedEntry, BudgetOutcome, BudgetUsage, ByteBudget, ChargeOutcome, KeyCap, Meter, SharedState, WindowCount } from './shared-state.js';

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

interface Subscription {
  readonly listener: (message: string) => void;
  /** False once unsubscribed or closed: a message already queued for it is then not delivered. */
  active: boolean;
}

interface StoredCounter {
  windowStartMs: number;
  current: number;
  previous: number;
  expiresAtMs: number;
}

/**
 * Shared state for a single gateway process (`state.url: memory`): maps in this process, so
 * several gateways each count on their own, and messages reach this instance's subscribers only.
 * Every method is an `async` function that never awaits: its whole body runs before any other call
 * can start, which is what makes each operation atomic here, while callers still get the promise a
 * networked backend must return.
 *
 * An expired entry is never returned, and is removed the next time its key is used or, for keys
 * nobody uses again, by a sweep every `sweepIntervalMs` on an unref'd timer (it does not keep the
 * process alive; `close()` stops it). A key holds one entry however often it is written, a window
 * counter two numbers however many windows pass, and an expiring map one entry per field.
 *
 * The backend cannot become unreachable, so `onAvailability` listeners are never called.
 */
export class MemoryState implements SharedState {
  private readonly values = new Map<string, StoredValue>();
  /** Keyed by `counterId`: the window length is part of a counter's identity. */
  private readonly counters = new Map<string, StoredCounter>();
  /** Expiring maps: key → field → value. */
  private readonly fieldMaps = new Map<string, Map<string, StoredValue>>();
  /** setIfAbsent's capped indexes: the keys each one let in, earliest first. */
  private readonly indexes = new Map<string, Set<string>>();
  private readonly channels = new Map<string, Set<Subscription>>();
  private meters = new MemoryMeters();
  private readonly budgets = new MemoryBudgets(this.values);
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
    let fields = 0;
    for (const map of this.fieldMaps.values()) fields += map.size;
    return this.values.size + this.counters.size + fields + this.meters.size;
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

  async setIfAbsent(key: string, value: string, ttlMs: number, cap?: KeyCap): Promise<string> {
    this.requireOpen();
    requireEntry(key, value, ttlMs);
    requireCap(cap);
    const now = this.now();
    const existing = live(this.values, key, now);
    if (existing !== undefined) return existing.value;
    this.values.set(key, { value, expiresAtMs: now + ttlMs });
    if (cap !== undefined) this.addToIndex(cap, key);
    return value;
  }

  /** A Set keeps the order keys were added in: its first keys are the earliest, the ones that go. */
  private addToIndex(cap: KeyCap, key: string): void {
    let index = this.indexes.get(cap.index);
    if (index === undefined) {
      index = new Set();
      this.indexes.set(cap.index, index);
    }
    index.delete(key);
    index.add(key);
    for (const oldest of index) {
      if (index.size <= cap.limit) break;
      index.delete(oldest);
      this.values.delete(oldest);
    }
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

  async getAndTouch(key: string, ttlMs: number): Promise<string | null> {
    this.requireOpen();
    requireString('key', key);
    requireMilliseconds('ttlMs', ttlMs);
    const now = this.now();
    const existing = live(this.values, key, now);
    if (existing === undefined) return null;
    existing.expiresAtMs = now + ttlMs;
    return existing.value;
  }

  async addToWindow(key: string, amount: number, windowMs: number): Promise<WindowCount> {
    this.requireOpen();
    requireString('key', key);
    requireAmount(amount);
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

  async charge(meters: readonly Meter[]): Promise<ChargeOutcome> {
    this.requireOpen();
    requireMeters(meters);
    return this.meters.charge(meters, this.now());
  }

  async setWithinBudget(pool: string, group: string, entries: readonly BudgetedEntry[], ttlMs: number, budget: ByteBudget): Promise<BudgetOutcome> {
    this.requireOpen();
    requireBudgetedEntries(pool, group, entries, ttlMs, budget);
    return this.budgets.setWithinBudget(pool, group, entries, ttlMs, budget, this.now());
  }

  async budgetUsage(pool: string, group: string): Promise<BudgetUsage> {
    this.requireOpen();
    requireString('pool', pool);
    requireString('group', group);
    return this.budgets.usage(pool, group, this.now());
  }

  async setField(key: string, field: string, value: string, ttlMs: number): Promise<void> {
    this.requireOpen();
    requireString('key', key);
    requireString('field', field);
    requireString('value', value);
    requireMilliseconds('ttlMs', ttlMs);
    let fields = this.fieldMaps.get(key);
    if (fields === undefined) {
      fields = new Map();
      this.fieldMaps.set(key, fields);
    }
    fields.set(field, { value, expiresAtMs: this.now() + ttlMs });
  }

  async readFields(key: string): Promise<Record<string, string>> {
    this.requireOpen();
    requireString('key', key);
    const fields = this.fieldMaps.get(key);
    if (fields === undefined) return {};
    const now = this.now();
    const entries: Array<[string, string]> = [];
    for (const [field, stored] of fields) {
      if (stored.expiresAtMs > now) entries.push([field, stored.value]);
      else fields.delete(field);
    }
    if (fields.size === 0) this.fieldMaps.delete(key);
    // fromEntries defines own properties, so a field named "__proto__" is a field like any other.
    return Object.fromEntries(entries);
  }

  async publish(channel: string, message: string): Promise<void> {
    this.requireOpen();
    requireString('channel', channel);
    requireString('message', message);
    const subscriptions = this.channels.get(channel);
    if (subscriptions === undefined) return;
    // Those subscribed now, as Redis does; a microtask each keeps publish order and keeps listeners
    // out of the publisher's call, as a networked backend would.
    const recipients = [...subscriptions];
    queueMicrotask(() => {
      for (const subscription of recipients) if (subscription.active) callListener(subscription.listener, message);
    });
  }

  async subscribe(channel: string, listener: (message: string) => void): Promise<() => Promise<void>> {
    this.requireOpen();
    requireString('channel', channel);
    requireListener(listener);
    const subscription: Subscription = { listener, active: true };
    let subscriptions = this.channels.get(channel);
    if (subscriptions === undefined) {
      subscriptions = new Set();
      this.channels.set(channel, subscriptions);
    }
    subscriptions.add(subscription);
    return async () => {
      subscription.active = false;
      const current = this.channels.get(channel);
      current?.delete(subscription);
      if (current?.size === 0) this.channels.delete(channel);
    };
  }

  onAvailability(listener: (available: boolean) => void): () => void {
    this.requireOpen();
    requireListener(listener);
    return () => {};
  }

  async close(): Promise<void> {
    if (this.sweeper !== null) clearInterval(this.sweeper);
    this.sweeper = null;
    this.values.clear();
    this.counters.clear();
    this.fieldMaps.clear();
    this.indexes.clear();
    this.meters = new MemoryMeters();
    this.budgets.clear();
    for (const subscriptions of this.channels.values()) for (const subscription of subscriptions) subscription.active = false;
    this.channels.clear();
  }

  private sweep(): void {
    const now = this.now();
    // Deleting the entry being visited is safe while iterating a Map.
    for (const [key, stored] of this.values) if (stored.expiresAtMs <= now) this.values.delete(key);
    for (const [id, stored] of this.counters) if (stored.expiresAtMs <= now) this.counters.delete(id);
    for (const [key, fields] of this.fieldMaps) {
      for (const [field, stored] of fields) if (stored.expiresAtMs <= now) fields.delete(field);
      if (fields.size === 0) this.fieldMaps.delete(key);
    }
    for (const [name, index] of this.indexes) {
      for (const key of index) if (!this.values.has(key)) index.delete(key);
      if (index.size === 0) this.indexes.delete(name);
    }
    this.meters.sweep(now);
    this.budgets.sweep(now);
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
