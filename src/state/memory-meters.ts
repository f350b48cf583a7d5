import { ROOM_SHARE, type ChargeOutcome, type Meter } from './shared-state.js';

interface StoredMeterCount {
  value: number;
  expiresAtMs: number;
}

/** What one owner holds on a slot set. */
interface Holding {
  slots: number;
  leaseEndMs: number;
}

/** A slot set: owner → its slots and lease, their sum, and the earliest lease end, so a read prunes only when a lease has ended. */
interface SlotSet {
  readonly owners: Map<string, Holding>;
  total: number;
  earliestEndMs: number;
}

const NONE: number[] = [];

/**
 * The meters of MemoryState (`charge`): counters and slot sets in this process. Called only from
 * MemoryState's async methods, which never await, so each charge runs whole before any other.
 * On every request's path: plain loops, counters changed in place.
 */
export class MemoryMeters {
  private readonly counts = new Map<string, StoredMeterCount>();
  private readonly slotSets = new Map<string, SlotSet>();

  get size(): number {
    let owners = 0;
    for (const set of this.slotSets.values()) owners += set.owners.size;
    return this.counts.size + owners;
  }

  charge(meters: readonly Meter[], now: number): ChargeOutcome {
    const count = meters.length;
    const values = new Array<number>(count);
    let missing: number[] | null = null;
    let seeds = false;
    for (let index = 0; index < count; index++) {
      const meter = meters[index] as Meter;
      if (meter.owner !== undefined) {
        values[index] = this.liveSlots(meter.key, now)?.total ?? 0;
        continue;
      }
      const stored = this.liveCount(meter.key, now);
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
    if (seeds) this.plantSeeds(meters, now);
    for (let index = 0; index < count; index++) {
      const { limit } = meters[index] as Meter;
      if (limit !== null && (values[index] as number) >= limit) return { refused: index, values, missing: NONE, rooms: NONE };
    }
    let rooms: number[] | null = null;
    for (let index = 0; index < count; index++) {
      const meter = meters[index] as Meter;
      const amount = meter.amount;
      let room = 0;
      if (meter.room !== undefined && meter.limit !== null) {
        const current = meter.owner === undefined ? (this.counts.get(meter.key)?.value ?? 0) : (this.liveSlots(meter.key, now)?.total ?? 0);
        if (meter.limit - current - amount >= ROOM_SHARE * meter.room) {
          room = meter.room;
          (rooms ??= []).push(index);
        }
      }
      if (meter.owner !== undefined) values[index] = this.hold(meter, meter.owner, amount + room, meter.atLeast ?? 0, now);
      else if (amount + room !== 0) values[index] = this.add(meter, amount + room, now);
    }
    return { refused: -1, values, missing: NONE, rooms: rooms ?? NONE };
  }

  sweep(now: number): void {
    for (const [key, count] of this.counts) if (count.expiresAtMs <= now) this.counts.delete(key);
    for (const key of [...this.slotSets.keys()]) this.liveSlots(key, now);
  }

  /** Absent counters with a seed start at it, whether the charge is then refused or not. */
  private plantSeeds(meters: readonly Meter[], now: number): void {
    for (const meter of meters) {
      if (meter.owner === undefined && meter.seed !== undefined && !this.counts.has(meter.key))
        this.counts.set(meter.key, { value: meter.seed, expiresAtMs: now + meter.ttlMs });
    }
  }

  private add(meter: Meter, amount: number, now: number): number {
    const stored = this.counts.get(meter.key);
    if (stored === undefined) {
      if (meter.ifPresent === true) return 0;
      this.counts.set(meter.key, { value: amount, expiresAtMs: now + meter.ttlMs });
      return amount;
    }
    stored.value += amount;
    stored.expiresAtMs = now + meter.ttlMs;
    return stored.value;
  }

  /** Adds `slots` (negative: gives back, never below `atLeast`, 0 or more) to what the owner holds, and renews its lease while it holds any; the set's total after. */
  private hold(meter: Meter, owner: string, slots: number, atLeast: number, now: number): number {
    let set = this.liveSlots(meter.key, now);
    const holding = set?.owners.get(owner);
    const held = holding?.slots ?? 0;
    const after = Math.max(atLeast, held + slots);
    if (after === 0) {
      if (set === undefined || holding === undefined) return set?.total ?? 0;
      set.owners.delete(owner);
      set.total -= held;
      if (set.owners.size === 0) this.slotSets.delete(meter.key);
      return set.total;
    }
    const leaseEndMs = now + meter.ttlMs;
    if (set === undefined) this.slotSets.set(meter.key, (set = { owners: new Map(), total: 0, earliestEndMs: leaseEndMs }));
    if (holding === undefined) set.owners.set(owner, { slots: after, leaseEndMs });
    else {
      holding.slots = after;
      holding.leaseEndMs = leaseEndMs;
    }
    set.total += after - held;
    if (leaseEndMs < set.earliestEndMs) set.earliestEndMs = leaseEndMs;
    return set.total;
  }

  /** The counter, unless it has expired (then it is forgotten). */
  private liveCount(key: string, now: number): StoredMeterCount | undefined {
    const stored = this.counts.get(key);
    if (stored === undefined || stored.expiresAtMs > now) return stored;
    this.counts.delete(key);
    return undefined;
  }

  /** The set with its ended leases dropped (looked for only once the earliest has ended); undefined, and forgotten, when none is left. */
  private liveSlots(key: string, now: number): SlotSet | undefined {
    const set = this.slotSets.get(key);
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
    this.slotSets.delete(key);
    return undefined;
  }
}
