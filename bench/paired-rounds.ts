import type { PairedRounds } from './report.js';
import type { TargetName } from './targets.js';

/** What one target measured, round by round, before the medians are taken. */
export interface Samples {
  rps: number[];
  /** CPU µs per request of the target's own process, per throughput round. */
  cpu: number[];
  /** CPU µs per request of the state store it uses (the pool's Redis), per throughput round; empty without one. */
  stateCpu: number[];
  p50: number[];
  openLoop: Record<number, { p99: number[]; cpu: number[]; busy: number[]; failed: number }>;
  firstByte: number[];
  total: number[];
  failures: number;
  peak: number;
  idle: number;
}

/** Switchyard against the floor (throughput) and against direct (p99), within each round. */
export function pairedRounds(samples: ReadonlyMap<TargetName, Samples>, rates: readonly number[]): PairedRounds | null {
  const switchyard = samples.get('switchyard');
  const floor = samples.get('bare');
  const direct = samples.get('direct');
  if (switchyard === undefined || floor === undefined || direct === undefined || floor.rps.length !== switchyard.rps.length) return null;
  const p99OverheadMs: Record<number, number[]> = {};
  for (const rate of rates) {
    const ours = switchyard.openLoop[rate]?.p99;
    const under = direct.openLoop[rate]?.p99;
    if (ours !== undefined && under !== undefined && ours.length === under.length)
      p99OverheadMs[rate] = ours.map((value, index) => value - (under[index] as number));
  }
  const base = samples.get('baseline');
  const cpuVsBaseline = base === undefined ? undefined : switchyard.cpu.map((value, index) => value / (base.cpu[index] as number));
  return {
    rpsVsFloor: switchyard.rps.map((value, index) => value / (floor.rps[index] as number)),
    p99OverheadMs,
    ...(cpuVsBaseline === undefined ? {} : { cpuVsBaseline }),
  };
}
