import { wrk, type WrkResult } from './load.js';
import type { Target, TargetName } from './targets.js';

/** How long a Node target is loaded before it counts as warm (run-bench.ts's plans, the guard's). */
export interface WarmUpPlan {
  /** The first window, in seconds. */
  warmupSeconds: number;
  /** At most this many 2-s windows after it, until two in a row agree. */
  maxSteadySlices: number;
}

// Node servers need several seconds of load before their JIT and heap settle (Switchyard, with the
// longest code path, ~6 s: measured 89 µs a request after 3 s, 60 µs after 6 s). Every Node proxy gets
// the same warm-up; direct and nginx are warm after the first second.
const WARM_AFTER_ONE_SECOND: readonly TargetName[] = ['direct', 'nginx'];
// How long a Node proxy takes to settle depends on the host: on a slow one Switchyard was still
// getting faster after 10–15 s (measured: 5,300 → 6,400 → 7,900 RPS in three 3-s slices after 6 s
// of warm-up), and a quick run measured it half-warm at 0.36–0.64× the floor. So after the fixed
// warm-up, 2-s slices follow until two in a row agree within 5 % (at most `maxSteadySlices`).
const STEADY_SLICE_SECONDS = 2;
const STEADY_TOLERANCE = 0.05;

/** Loads `target` (64 connections) until its throughput is steady; says how long that took in `notes`. */
export async function warmUp(target: Target, workDirectory: string, plan: WarmUpPlan, notes: string[]): Promise<WrkResult> {
  if (WARM_AFTER_ONE_SECOND.includes(target.name)) return wrk(target, 64, 1, workDirectory);
  let previous = await wrk(target, 64, plan.warmupSeconds, workDirectory);
  for (let slice = 1; slice <= plan.maxSteadySlices; slice++) {
    const next = await wrk(target, 64, STEADY_SLICE_SECONDS, workDirectory);
    const change = Math.abs(next.requestsPerSecond - previous.requestsPerSecond) / previous.requestsPerSecond;
    previous = next;
    if (change < STEADY_TOLERANCE) {
      notes.push(`${target.label}: steady after ${plan.warmupSeconds + slice * STEADY_SLICE_SECONDS} s of warm-up`);
      return next;
    }
  }
  notes.push(
    `${target.label}: throughput still changing by over 5 % after ${plan.warmupSeconds + plan.maxSteadySlices * STEADY_SLICE_SECONDS} s of warm-up; measured anyway`,
  );
  return previous;
}
