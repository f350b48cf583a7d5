import { spawn } from 'node:child_process';
import { LOAD_CORE } from './load.js';
import { SERVER_CORE } from './targets.js';

/** Time a busy loop on one core did not get, as the hypervisor took it away. */
export interface CoreNoise {
  core: string;
  /** Milliseconds lost per second of wall time (gaps over 1 ms between two reads of the clock). */
  lostMsPerSecond: number;
  gapsOver5Ms: number;
  longestGapMs: number;
}

// Allocation-free, so no GC pause of its own counts as a gap.
const LOOP = `
const end = performance.now() + Number(process.argv[1]);
let last = performance.now(), lost = 0, over5 = 0, longest = 0;
for (;;) {
  const now = performance.now();
  const gap = now - last;
  if (gap > 1) { lost += gap; if (gap > 5) over5++; if (gap > longest) longest = gap; }
  last = now;
  if (now >= end) break;
}
process.stdout.write(JSON.stringify({ lost, over5, longest }));
`;

/**
 * How noisy the machine is: a busy loop pinned to each core at once, as the load generator and the
 * servers keep both busy during the bench. On these 2-vCPU VMs, with both vCPUs busy the host takes
 * time away in slices of up to tens of milliseconds, which lands in every target's p99 alike (the
 * same loop on one core while the other idles lost ~0.1 ms a second).
 */
export async function measureMachineNoise(seconds: number): Promise<CoreNoise[]> {
  const durationMs = seconds * 1000;
  return Promise.all(
    [LOAD_CORE, SERVER_CORE].map(
      (core) =>
        new Promise<CoreNoise>((resolve, reject) => {
          const child = spawn('taskset', ['-c', core, process.execPath, '-e', LOOP, String(durationMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
          let output = '';
          child.stdout.on('data', (part: Buffer) => (output += part.toString()));
          child.once('error', reject);
          child.once('exit', (code) => {
            if (code !== 0) return reject(new Error(`the noise probe on core ${core} exited with ${code}`));
            const { lost, over5, longest } = JSON.parse(output) as { lost: number; over5: number; longest: number };
            resolve({ core, lostMsPerSecond: lost / seconds, gapsOver5Ms: over5, longestGapMs: longest });
          });
        }),
    ),
  );
}

export function describeNoise(when: string, noise: readonly CoreNoise[]): string {
  const parts = noise.map(
    (noise) =>
      `core ${noise.core} lost ${noise.lostMsPerSecond.toFixed(1)} ms/s, ${noise.gapsOver5Ms} gaps over 5 ms, longest ${noise.longestGapMs.toFixed(1)} ms`,
  );
  return `machine noise ${when} (busy loop on both cores): ${parts.join('; ')} — time the host took from both cores at once lands in every target's p99 alike`;
}
