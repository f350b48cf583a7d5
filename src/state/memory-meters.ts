import { chargeMeters, emptyRecord, sweepRecord, type MeterRecord } from './meter-rules.js';
import type { ChargeOutcome, Meter } from './shared-state.js';

/**
 * The meters of MemoryState (`charge`): counters and slot sets in this process, all in one record
 * (meter-rules.ts has the rules). Called only from MemoryState's async methods, which never await,
 * so each charge runs whole before any other.
 */
export class MemoryMeters {
  private readonly record: MeterRecord = emptyRecord();
  private readonly recordOf = (): MeterRecord => this.record;

  get size(): number {
    let owners = 0;
    for (const set of this.record.slotSets.values()) owners += set.owners.size;
    return this.record.counts.size + owners;
  }

  charge(meters: readonly Meter[], now: number): ChargeOutcome {
    return chargeMeters(meters, this.recordOf, now, unchanged);
  }

  sweep(now: number): void {
    sweepRecord(this.record, now);
  }
}

/** A record in this process is the meters themselves: there is nothing to write back. */
function unchanged(): void {}
