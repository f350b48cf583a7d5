import { firstLine } from './bench-setup.js';
import { median, wrk } from './load.js';
import { cpuSeconds } from './process-stats.js';
import type { Target } from './targets.js';
import type { WarmUpPlan } from './warm-up.js';

/**
 * What the guard (bench/guard.ts) and the feature ladder (bench/breakdown.ts) measure alike, so
 * that the ladder's figures are the guard's: the load of a window, the warm-up, one window's CPU
 * per request, the medians of rounds, and the tables and flags they print and read.
 */

export const CONNECTIONS = 64;
// Shorter than the full bench's (6 s then up to eight 2-s slices): the guard's run must stay near
// two minutes, and its bounds are wide.
export const WARM_UP: WarmUpPlan = { warmupSeconds: 6, maxSteadySlices: 4 };

/** One wrk window of a target: its CPU µs per request, and its state store's when it has one. */
export interface CpuWindow {
  requests: number;
  cpu: number;
  stateCpu: number | null;
  stateCommands: number | null;
  stateSkipped: number | null;
  failures: number;
}

/** One window of `target`: its CPU µs per request, and its state store's when it has one. */
export async function measureWindow(target: Target, seconds: number, workDirectory: string): Promise<CpuWindow> {
  const skippedBefore = await target.stateSkipped?.();
  const commandsBefore = await target.stateCommands?.();
  const stateBefore = await target.stateCpuSeconds?.();
  const cpuBefore = cpuSeconds(target.pid);
  const loaded = await wrk(target, CONNECTIONS, seconds, workDirectory);
  const cpu = cpuSeconds(target.pid) - cpuBefore;
  const stateAfter = await target.stateCpuSeconds?.();
  const commandsAfter = await target.stateCommands?.();
  const skippedAfter = await target.stateSkipped?.();
  const requests = Math.max(1, loaded.requests);
  const difference = (before: number | undefined, after: number | undefined) => (before === undefined || after === undefined ? null : after - before);
  const stateSeconds = difference(stateBefore, stateAfter);
  const commands = difference(commandsBefore, commandsAfter);
  return {
    requests: loaded.requests,
    cpu: (cpu * 1_000_000) / requests,
    stateCpu: stateSeconds === null ? null : (stateSeconds * 1_000_000) / requests,
    stateCommands: commands === null ? null : commands / requests,
    stateSkipped: difference(skippedBefore, skippedAfter),
    failures: loaded.failures + (loaded.requests > 0 ? 0 : 1),
  };
}

/** The median over rounds of one figure of each: a ratio or a difference is taken within its round first, then its median. */
export function medianOf<Round>(rounds: readonly Round[], pick: (round: Round) => number): number {
  return median(rounds.map(pick));
}

export const micro = (value: number) => `${Math.round(value)}`;
export const times = (value: number) => `${value.toFixed(2)}×`;

/** Rows of cells as columns as wide as their widest cell (the first row's count of columns): the first `leftAligned` columns padded at the end, the others at the start. */
export function alignedTable(rows: ReadonlyArray<readonly string[]>, leftAligned = 0): string {
  const header = rows[0] ?? [];
  const widths = header.map((_, column) => Math.max(...rows.map((cells) => (cells[column] ?? '').length)));
  return rows
    .map((cells) =>
      cells.map((cell, column) => (column < leftAligned ? cell.padEnd(widths[column] as number) : cell.padStart(widths[column] as number))).join('  '),
    )
    .join('\n');
}

/** The word after `flag` in `argv`, if the flag is there. */
export function flagValue(argv: readonly string[], flag: string): string | undefined {
  const index = argv.indexOf(flag);
  return index === -1 ? undefined : argv[index + 1];
}

/** A positive number flag (a whole one when `integer`), `fallback` when absent; throws on anything else. */
export function positiveFlag(argv: readonly string[], flag: string, fallback: number, integer: boolean): number {
  const text = flagValue(argv, flag);
  if (text === undefined) return fallback;
  const number = Number(text);
  if (!(number > 0) || (integer && !Number.isInteger(number))) throw new Error(`${flag} needs a positive ${integer ? 'whole ' : ''}number, not ${text}`);
  return number;
}

/** Runs a bench command's `main` and exits with its code; a failure is one `NAME: failed: …` line on stdout (what CI's log shows) and its stack on stderr. */
export function runCommand(name: string, main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stdout.write(`${name}: failed: ${firstLine(error)}\n`);
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
