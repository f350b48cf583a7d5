/** mulberry32: small, fast, and the same numbers from the same seed on every run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The value at `fraction` of sorted values (NaN when there are none). */
export function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
}

/** `run` `warmup` times unmeasured, then `runs` times measured: the rows its last run returned, and its times in ms, sorted. */
export async function timedRuns(run: () => Promise<number>, warmup: number, runs: number): Promise<{ rows: number; times: number[] }> {
  let rows = 0;
  for (let index = 0; index < warmup; index++) rows = await run();
  const times: number[] = [];
  for (let index = 0; index < runs; index++) {
    const began = performance.now();
    rows = await run();
    times.push(performance.now() - began);
  }
  times.sort((a, b) => a - b);
  return { rows, times };
}
