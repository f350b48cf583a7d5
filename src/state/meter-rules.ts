import { ROOM_SHARE, type ChargeOutcome, type Meter } from './shared-state.js';

/** A counter's value and when it expires. */
export interface StoredMeterCount {
  value: number;
  expiresAtMs: number;
}

/** What one owner holds on a slot set. */
export interface Holding {
  slots: number;
  leaseEndMs: number;
}

/** A slot set: owner → its slots and lease, their sum, and the earliest lease end, so a read prunes only when a lease has ended. */
export interface SlotSet {
  readonly owners: Map<string, Holding>;
  total: number;
  earliestEndMs: number;
}

/**
 * Meters kept together, by key: all of MemoryState's in one, a group's (a limit holder's) in
 * each of RedisState's records.
 */
export interface MeterRecord {
  readonly counts: Map<string, StoredMeterCount>;
  readonly slotSets: Map<string, SlotSet>;
}

export function emptyRecord(): MeterRecord {
  return { counts: new Map(), slotSets: new Map() };
}

const NONE: number[] = [];

/**
 * The rules of `SharedState.charge`, for both backends: the meters are read from and changed in
 * the records `recordOf` gives, and `changed` is told of each record changed. The caller makes
 * the step atomic (MemoryState runs it whole; RedisState writes the records back only if no other
 * process changed them meanwhile). Plain loops, counters changed in place: this runs on every
 * request's path.
 */
export function chargeMeters(
  meters: readonly Meter[],
  recordOf: (meter: Meter) => MeterRecord,
  now: number,
  changed: (record: MeterRecord) => void,
): ChargeOutcome {
  const count = meters.length;
  const values = new Array<number>(count);
  let missing: number[] | null = null;
  let seeds = false;
  for (let index = 0; index < count; index++) {
    const meter = meters[index] as Meter;
    const record = recordOf(meter);
    if (meter.owner !== undefined) {
      values[index] = liveSlots(record, meter.key, now)?.total ?? 0;
      continue;
    }
    const stored = liveCount(record, meter.key, now);
    if (stored !== undefined) {
      values[index] = stored.value;
    } else if (meter.seed !== undefined) {
      values[index] = meter.seed;
      seeds = true;
    } else {
      values[index] = 0;
      if (meter.needsSeed === true) (missing ??= []).push(index);
    }
  }
  if (missing !== null) return { refused: -1, values, missing, rooms: NONE };
  if (seeds) plantSeeds(meters, recordOf, now, changed);
  for (let index = 0; index < count; index++) {
    const { limit } = meters[index] as Meter;
    if (limit !== null && (values[index] as number) >= limit) return { refused: index, values, missing: NONE, rooms: NONE };
  }
  let rooms: number[] | null = null;
  for (let index = 0; index < count; index++) {
    const meter = meters[index] as Meter;
    const record = recordOf(meter);
    const amount = meter.amount;
    let room = 0;
    if (meter.room !== undefined && meter.limit !== null) {
      const current = meter.owner === undefined ? (record.counts.get(meter.key)?.value ?? 0) : (liveSlots(record, meter.key, now)?.total ?? 0);
      if (meter.limit - current - amount >= ROOM_SHARE * meter.room) {
        room = meter.room;
        (rooms ??= []).push(index);
      }
    }
    if (meter.owner !== undefined) values[index] = hold(record, meter, meter.owner, amount + room, meter.atLeast ?? 0, now, changed);
    else if (amount + room !== 0) values[index] = add(record, meter, amount + room, now, changed);
  }
  return { refused: -1, values, missing: NONE, rooms: rooms ?? NONE };
}

/** Drops what has expired from a record (what it holds, not what it means: an expired entry already reads as absent). */
export function sweepRecord(record: MeterRecord, now: number): void {
  for (const [key, count] of record.counts) if (count.expiresAtMs <= now) record.counts.delete(key);
  for (const key of [...record.slotSets.keys()]) liveSlots(record, key, now);
}

/** Absent counters with a seed start at it, whether the charge is then refused or not. */
function plantSeeds(meters: readonly Meter[], recordOf: (meter: Meter) => MeterRecord, now: number, changed: (record: MeterRecord) => void): void {
  for (const meter of meters) {
    if (meter.owner !== undefined || meter.seed === undefined) continue;
    const record = recordOf(meter);
    if (record.counts.has(meter.key)) continue;
    record.counts.set(meter.key, { value: meter.seed, expiresAtMs: now + meter.ttlMs });
    changed(record);
  }
}

function add(record: MeterRecord, meter: Meter, amount: number, now: number, changed: (record: MeterRecord) => void): number {
  const stored = record.counts.get(meter.key);
  if (stored === undefined) {
    if (meter.ifPresent === true) return 0;
    record.counts.set(meter.key, { value: amount, expiresAtMs: now + meter.ttlMs });
    changed(record);
    return amount;
  }
  stored.value += amount;
  stored.expiresAtMs = now + meter.ttlMs;
  changed(record);
  return stored.value;
}

/** Adds `slots` (negative: gives back, never below `atLeast`, 0 or more) to what the owner holds, and renews its lease while it holds any; the set's total after. */
function hold(record: MeterRecord, meter: Meter, owner: string, slots: number, atLeast: number, now: number, changed: (record: MeterRecord) => void): number {
  let set = liveSlots(record, meter.key, now);
  const holding = set?.owners.get(owner);
  const held = holding?.slots ?? 0;
  const after = Math.max(atLeast, held + slots);
  if (after === 0) {
    if (set === undefined || holding === undefined) return set?.total ?? 0;
    set.owners.delete(owner);
    set.total -= held;
    if (set.owners.size === 0) record.slotSets.delete(meter.key);
    changed(record);
    return set.total;
  }
  const leaseEndMs = now + meter.ttlMs;
  if (set === undefined) record.slotSets.set(meter.key, (set = { owners: new Map(), total: 0, earliestEndMs: leaseEndMs }));
  if (holding === undefined) set.owners.set(owner, { slots: after, leaseEndMs });
  else {
    holding.slots = after;
    holding.leaseEndMs = leaseEndMs;
  }
  set.total += after - held;
  if (leaseEndMs < set.earliestEndMs) set.earliestEndMs = leaseEndMs;
  changed(record);
  return set.total;
}

/** The counter, unless it has expired (then it is forgotten). */
function liveCount(record: MeterRecord, key: string, now: number): StoredMeterCount | undefined {
  const stored = record.counts.get(key);
  if (stored === undefined || stored.expiresAtMs > now) return stored;
  record.counts.delete(key);
  return undefined;
}

/** The set with its ended leases dropped (looked for only once the earliest has ended); undefined, and forgotten, when none is left. */
function liveSlots(record: MeterRecord, key: string, now: number): SlotSet | undefined {
  const set = record.slotSets.get(key);
  if (set === undefined) return undefined;
  if (set.earliestEndMs > now) return set;
  let earliest = Number.POSITIVE_INFINITY;
  for (const [owner, holding] of set.owners) {
    if (holding.leaseEndMs <= now) {
      set.owners.delete(owner);
      set.total -= holding.slots;
    } else if (holding.leaseEndMs < earliest) earliest = holding.leaseEndMs;
  }
  set.earliestEndMs = earliest;
  if (set.owners.size > 0) return set;
  record.slotSets.delete(key);
  return undefined;
}
