import type { ChargeOutcome, Meter } from './shared-state.js';

interface StoredMeterCount {
  value: number;
  expiresAtMs: number;
}

/**
 * The meters of MemoryState (`charge`): counters and slot sets in this process. Called only from
 * MemoryState's async methods, which never await, so each charge runs whole before any other.
 */
export class MemoryMeters {
  private readonly counts = new Map<string, StoredMeterCount>();
  /** Slot set key → slot → when its lease ends. */
  private readonly slotSets = new Map<string, Map<string, number>>();

  get size(): number {
    let slots = 0;
    for (const set of this.slotSets.values()) slots += set.size;
    return this.counts.size + slots;
  }

  charge(meters: readonly Meter[], now: number): ChargeOutcome {
    const values: number[] = [];
    const absent: boolean[] = [];
    const missing: number[] = [];
    meters.forEach((meter, index) => {
      if (meter.slot !== undefined) {
        values.push(this.liveSlots(meter.key, now)?.size ?? 0);
        absent.push(false);
        return;
      }
      const stored = this.liveCount(meter.key, now);
      absent.push(stored === undefined);
      if (stored === undefined && meter.seed === undefined && meter.needsSeed === true) missing.push(index);
      values.push(stored?.value ?? meter.seed ?? 0);
    });
    if (missing.length > 0) return { refused: -1, values, missing };
    meters.forEach((meter, index) => {
      if (absent[index] === true && meter.seed !== undefined) this.counts.set(meter.key, { value: meter.seed, expiresAtMs: now + meter.ttlMs });
    });
    const refused = meters.findIndex((meter, index) => meter.limit !== null && (values[index] as number) >= meter.limit);
    if (refused !== -1) return { refused, values, missing };
    meters.forEach((meter, index) => {
      values[index] = meter.slot === undefined ? this.add(meter, now) : this.moveSlot(meter, meter.slot, now);
    });
    return { refused: -1, values, missing };
  }

  sweep(now: number): void {
    for (const [key, count] of this.counts) if (count.expiresAtMs <= now) this.counts.delete(key);
    for (const key of [...this.slotSets.keys()]) this.liveSlots(key, now);
  }

  private add(meter: Meter, now: number): number {
    const stored = this.counts.get(meter.key);
    // A read changes nothing, not even when the counter expires.
    if (meter.amount === 0) return stored?.value ?? 0;
    const value = (stored?.value ?? 0) + meter.amount;
    this.counts.set(meter.key, { value, expiresAtMs: now + meter.ttlMs });
    return value;
  }

  private moveSlot(meter: Meter, slot: string, now: number): number {
    let slots = this.liveSlots(meter.key, now);
    if (meter.amount > 0) {
      if (slots === undefined) this.slotSets.set(meter.key, (slots = new Map()));
      slots.set(slot, now + meter.ttlMs);
    } else if (meter.amount < 0 && slots !== undefined) {
      slots.delete(slot);
      if (slots.size === 0) this.slotSets.delete(meter.key);
    }
    return slots?.size ?? 0;
  }

  private liveCount(key: string, now: number): StoredMeterCount | undefined {
    const stored = this.counts.get(key);
    if (stored === undefined || stored.expiresAtMs > now) return stored;
    this.counts.delete(key);
    return undefined;
  }

  /** The set with its expired slots dropped; undefined (and forgotten) when none is left. */
  private liveSlots(key: string, now: number): Map<string, number> | undefined {
    const slots = this.slotSets.get(key);
    if (slots === undefined) return undefined;
    for (const [slot, until] of slots) if (until <= now) slots.delete(slot);
    if (slots.size > 0) return slots;
    this.slotSets.delete(key);
    return undefined;
  }
}
