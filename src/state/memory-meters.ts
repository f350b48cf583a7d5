import { ROOM_SHARE, type ChargeOutcome, type Meter } from './shared-state.js';

interface StoredMeterCount {
  value: number;
  expiresAtMs: number;
}

/** A slot set: slot → when its lease ends, and the earliest of those, so a read prunes only when a lease has ended. */
interface SlotSet {
  readonly slots: Map<string, number>;
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
    let slots = 0;
    for (const set of this.slotSets.values()) slots += set.slots.size;
    return this.counts.size + slots;
  }

  charge(meters: readonly Meter[], now: number): ChargeOutcome {
    const count = meters.length;
    const values = new Array<number>(count);
    let missing: number[] | null = null;
    let seeds = false;
    for (let index = 0; index < count; index++) {
      const meter = meters[index] as Meter;
      if (meter.slot !== undefined) {
        values[index] = this.liveSlots(meter.key, now)?.slots.size ?? 0;
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
        const current = meter.slot === undefined ? (this.counts.get(meter.key)?.value ?? 0) : (this.liveSlots(meter.key, now)?.slots.size ?? 0);
        if (meter.limit - current - amount >= ROOM_SHARE * meter.room) {
          room = meter.room;
          (rooms ??= []).push(index);
        }
      }
      if (amount + room === 0) continue;
      values[index] = meter.slot === undefined ? this.add(meter, amount + room, now) : this.moveSlot(meter, meter.slot, room, now);
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
      if (meter.slot === undefined && meter.seed !== undefined && !this.counts.has(meter.key))
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

  /** Takes (or renews) the slot and the `room` slots named after it, or gives the slot back. */
  private moveSlot(meter: Meter, slot: string, room: number, now: number): number {
    let set = this.liveSlots(meter.key, now);
    if (meter.amount > 0) {
      const endsAt = now + meter.ttlMs;
      if (set === undefined) this.slotSets.set(meter.key, (set = { slots: new Map(), earliestEndMs: endsAt }));
      set.slots.set(slot, endsAt);
      for (let member = 1; member <= room; member++) set.slots.set(`${slot}#${member}`, endsAt);
      if (endsAt < set.earliestEndMs) set.earliestEndMs = endsAt;
    } else if (set !== undefined) {
      set.slots.delete(slot);
      if (set.slots.size === 0) this.slotSets.delete(meter.key);
    }
    return set?.slots.size ?? 0;
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
    for (const [slot, endsAt] of set.slots) {
      if (endsAt <= now) set.slots.delete(slot);
      else if (endsAt < earliest) earliest = endsAt;
    }
    set.earliestEndMs = earliest;
    if (set.slots.size > 0) return set;
    this.slotSets.delete(key);
    return undefined;
  }
}
