/**
 * State that every gateway process behind one `state.url` sees alike and that must be fast enough
 * to consult on each request: rate-limit and quota counters, session affinity, credential
 * cooldowns, short locks. Not durable: a restart of the backend may lose it, and nothing here is
 * worth a database write. See docs/state.md.
 *
 * Keys and values are strings. Values (`get`/`set`/…), window counters (`addToWindow`) and
 * expiring maps (`setField`/`readFields`) are three separate namespaces: a counter or a map is
 * invisible to `get`, and the same key may name one of each. Every value, counter and field has a
 * time to live, so an entry a crashed process left behind always goes away. Messages
 * (`publish`/`subscribe`) are not stored at all: they reach whoever is subscribed when they are sent.
 *
 * Every operation is asynchronous, since a networked backend must be; each one is atomic with
 * respect to every other, across all processes sharing the backend. Invalid arguments reject with
 * a TypeError (never a synchronous throw) before anything is changed; only `onAvailability`, which
 * registers synchronously, throws.
 */
export interface SharedState {
  /** The value, or null when absent or expired. */
  get(key: string): Promise<string | null>;

  /** Sets the value with a time to live (ms > 0), replacing any value and its TTL. */
  set(key: string, value: string, ttlMs: number): Promise<void>;

  /** Removes it; true when something was there (and not expired). */
  delete(key: string): Promise<boolean>;

  /**
   * Sets only when absent (or expired); returns the value now in effect (the existing one when it
   * was present, whose TTL is left as it was). Atomic: of two racing calls exactly one wins, and
   * both are told the winner's value.
   */
  setIfAbsent(key: string, value: string, ttlMs: number, cap?: KeyCap): Promise<string>;

  /**
   * Replaces the value only when it currently equals `expected` (null = absent or expired); true
   * when it did, and the new value then lives `ttlMs` from now. Atomic: of racing calls with the
   * same `expected`, at most one succeeds.
   */
  compareAndSet(key: string, expected: string | null, value: string, ttlMs: number): Promise<boolean>;

  /**
   * Makes a present value expire `ttlMs` from now (like Redis PEXPIRE: this may also shorten it);
   * false when absent or expired.
   */
  touch(key: string, ttlMs: number): Promise<boolean>;

  /**
   * The value, or null when absent or expired, and a present value now expires `ttlMs` from now: a
   * sliding TTL (a session kept while it is used) in one round trip, like Redis `GETEX key PX`.
   * Creates nothing when absent.
   */
  getAndTouch(key: string, ttlMs: number): Promise<string | null>;

  /**
   * Adds `amount` (may be 0 to read, or negative to give back) to the fixed window of length
   * `windowMs` that contains now, returning that window's total and the previous window's, so a
   * caller can compute a sliding-window estimate with {@link slidingWindowEstimate}. Atomic.
   * Windows are aligned to multiples of windowMs since the epoch. A counter is identified by its
   * key and its window length together. Counters expire after two windows; a read (amount 0) of a
   * counter that does not exist creates nothing.
   */
  addToWindow(key: string, amount: number, windowMs: number): Promise<WindowCount>;

  /**
   * Reads, checks and changes several meters in one atomic step (one round trip): what a request's
   * rate limits and quotas need, so that N processes on one backend together let through exactly
   * the limit. Meters are a fourth namespace. A counter (no `slot`) holds a number that lives
   * `ttlMs` after each change; a slot set (`slot` given) holds slots that each expire `ttlMs` after
   * they were taken, and its value is how many are held.
   *
   * Every meter is read first. When a meter with `needsSeed` is absent and has no `seed`, nothing
   * changes and its index is listed in `missing` (the caller rebuilds it from durable records and
   * calls again with `seed`). An absent counter with a `seed` starts at it, refused or not. Then,
   * if any meter with a `limit` is already at or over it, nothing else changes and `refused` is
   * the first such index (a meter that only gives back or settles has no limit). Otherwise every amount is applied:
   * added to counters (not to an absent one marked `ifPresent`) and to the owners' slots on slot
   * sets, whose leases are renewed.
   */
  charge(meters: readonly Meter[]): Promise<ChargeOutcome>;

  /**
   * Sets `entries` as values (each readable by `get`, living `ttlMs`) in one atomic step, counted
   * against byte budgets: the pool's `totalBytes` across all groups and `groupBytes` for `group`.
   * An entry weighs the UTF-8 bytes of its key and value; an expired entry stops counting, and a
   * key set again is counted once. Room is made by evicting (deleting) the group's oldest entries
   * while the group would go over its budget, then the pool's oldest, whatever their group, while
   * the pool would. Entries whose weight alone is over either budget are refused whole: nothing
   * changes and `stored` is false. "Oldest" is the soonest to expire, so a pool's entries should
   * all be given one TTL (then it is the order they were set in). Budgets and evictions are a
   * fifth namespace beside the values: values set with `set` are not counted, and should not be
   * mixed into a pool's keys. Atomic, so N processes on one backend together stay within budget.
   */
  setWithinBudget(pool: string, group: string, entries: readonly BudgetedEntry[], ttlMs: number, budget: ByteBudget): Promise<BudgetOutcome>;

  /** The bytes a group and its pool hold now (expired entries no longer counted): for limits shown and tests. */
  budgetUsage(pool: string, group: string): Promise<BudgetUsage>;

  /**
   * Sets one field of the expiring map at `key`, replacing its value and TTL; the map's other
   * fields keep theirs. Each field expires on its own: a gateway replica that writes its own field
   * every second with a TTL of a few seconds stops being counted soon after it dies.
   */
  setField(key: string, field: string, value: string, ttlMs: number): Promise<void>;

  /** The live fields of the expiring map at `key` and their values; `{}` when it has none. */
  readFields(key: string): Promise<Record<string, string>>;

  /**
   * Sends `message` to every subscriber of `channel` across the backend, this handle's own
   * included, at most once each and in the order published. Nothing is kept: a subscriber that is
   * not connected when it is sent never sees it.
   */
  publish(channel: string, message: string): Promise<void>;

  /**
   * Calls `listener` with each message published on `channel` from when this resolves until the
   * returned function is called: from that moment it is not called again, even for a message
   * already on its way (the function resolves once the backend is told; calling it again, or after
   * `close`, is harmless). Listeners are called asynchronously, never inside `publish`; one that
   * throws does not keep the message from the others, and its error is rethrown on its own.
   */
  subscribe(channel: string, listener: (message: string) => void): Promise<() => Promise<void>>;

  /**
   * Registers `listener` to be told when the backend becomes unreachable (`false`, once per
   * outage, while operations fail fast) and reachable again (`true`; not on the first connection).
   * A backend in this process (memory) never calls it. Messages published during an outage are
   * lost, so a subscriber that caches what they announce should re-read on `true`. Returns the
   * function that unregisters it.
   */
  onAvailability(listener: (available: boolean) => void): () => void;

  /**
   * Releases timers, connections and subscriptions; afterwards every operation rejects (and
   * `onAvailability` throws). Calling it again, or an unsubscribe function, is harmless.
   */
  close(): Promise<void>;
}

/** One value of a {@link SharedState.setWithinBudget}. */
export interface BudgetedEntry {
  key: string;
  value: string;
}

/** The byte budgets of a {@link SharedState.setWithinBudget}: positive integers. */
export interface ByteBudget {
  groupBytes: number;
  totalBytes: number;
}

export interface BudgetOutcome {
  /** False when the entries alone weigh more than a budget: then nothing changed. */
  stored: boolean;
  /** How many entries were evicted to make room. */
  evicted: number;
}

export interface BudgetUsage {
  groupBytes: number;
  totalBytes: number;
}

/**
 * Bounds how many keys set through one index may live: with `cap`, a key `setIfAbsent` sets is
 * added to the index (a namespace of its own), and when the index then holds more than `limit`
 * keys, the earliest added go, with their values, in the same atomic step. Keys of one team's
 * sessions, for one, so that no team can fill the backend.
 */
export interface KeyCap {
  index: string;
  /** A positive integer. */
  limit: number;
}

/** One meter of a {@link SharedState.charge}. */
export interface Meter {
  key: string;
  /** Added to a counter; on a slot set, slots the owner takes (a whole number; negative: gives back; 0: only renews). */
  amount: number;
  /** Refuses the whole step when the meter is already at or over it; null: never refuses. */
  limit: number | null;
  /** A counter's lifetime after this change, or the owner's lease on a slot set. */
  ttlMs: number;
  /**
   * Names who takes or gives back slots: the meter is a slot set, which counts the slots each
   * owner holds. Its value is the sum over the owners whose lease has not ended. `amount` slots
   * are added to the owner's (given back when negative, never below none). Every charge naming an
   * owner that holds slots afterwards, `amount` 0 included, renews the owner's lease on the set:
   * `ttlMs` from now. An owner is a process: it renews its one lease while it holds slots (a
   * heartbeat), and what a crashed one held is free once its lease ends.
   */
  owner?: string;
  /**
   * On a slot set: the owner holds at least this many afterwards (a whole number). A heartbeat
   * names what its process holds, so that slots a state restarted empty lost are taken again,
   * while a release or a take still on its way is not undone.
   */
  atLeast?: number;
  /**
   * The meters of one group are kept together: a backend may store them as one record (Redis: one
   * string), so that a charge of many meters of few groups (a limit holder's) costs it a read and
   * a write per group rather than per meter. It changes nothing else: a meter is still named by
   * its key alone (a key must not be used in two groups) and keeps its own lifetime.
   */
  group?: string;
  /** An absent counter's starting value (the spending durable records show). */
  seed?: number;
  /** Report an absent counter without a seed in `missing` instead of counting it from 0. */
  needsSeed?: boolean;
  /**
   * Change the counter only if it exists: an absent one stays absent (its value reads 0). A
   * settlement's adjustment of a quota the state lost must not start it afresh from the
   * adjustment, which would keep it from being rebuilt from durable records.
   */
  ifPresent?: boolean;
  /**
   * Room taken in advance, on a meter with a `limit`: this much is added as well, but only when
   * what is left under the limit after `amount` is at least ROOM_SHARE times `room` (so a caller
   * holds at most a sixteenth of what is left, and nothing near the limit); reported in `rooms`.
   * What a process counts locally against that room, it does not charge again. On a slot set
   * (taking slots) the room is that many more slots for the owner, whole.
   */
  room?: number;
}

/** A room is taken only while what is left under the limit is at least this many times the room. */
export const ROOM_SHARE = 16;

/** The most slots one slot room holds. */
export const MAX_SLOT_ROOM = 1_000;

export interface ChargeOutcome {
  /** The index of the meter that refused, or -1. */
  refused: number;
  /** Each meter's value after the step (before it, when nothing was applied). */
  values: number[];
  /** Indexes of absent counters that need a seed; when any, nothing was applied. */
  missing: number[];
  /** Indexes of the meters whose `room` was taken (added to their value). */
  rooms: number[];
}

/** One fixed window's total and the total of the window just before it, as `addToWindow` returns them. */
export interface WindowCount {
  /** The total of the window containing the time of the call, this call's amount included. */
  current: number;
  /** The total of the window before it, 0 when nothing was counted then. */
  previous: number;
  /** Where the current window starts: a multiple of `windowMs` since the epoch. */
  windowStartMs: number;
  windowMs: number;
}

/**
 * The sliding-window estimate of the last `windowMs` ending at `nowMs`: the current window in full
 * plus the share of the previous window the sliding window still overlaps,
 * `previous * (1 - elapsedFraction) + current`. It assumes the previous window's events were spread
 * evenly, which is what makes it cheap: two numbers per counter instead of one per event.
 *
 * A count read earlier may be used later: once `nowMs` has moved into the next window, the count's
 * current window is the previous one and is weighted as such, and two windows on it is 0. Before
 * `windowStartMs` (a clock behind the backend's) the elapsed fraction is taken as 0.
 */
export function slidingWindowEstimate(count: WindowCount, nowMs: number): number {
  const { current, previous, windowStartMs, windowMs } = count;
  const elapsed = Math.max(0, nowMs - windowStartMs);
  if (elapsed < windowMs) return previous * (1 - elapsed / windowMs) + current;
  if (elapsed < 2 * windowMs) return current * (1 - (elapsed - windowMs) / windowMs);
  return 0;
}
