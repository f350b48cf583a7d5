import { readdirSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

const CLOCK_TICKS_PER_SECOND = 100;
const PAGE_SIZE = 4096;

/** A process and its children (nginx's workers), as /proc sees them. */
function family(pid: number): number[] {
  try {
    const children = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
    return [pid, ...children.flatMap(family)];
  } catch {
    return [pid];
  }
}

/** A process's children, as /proc sees them. */
export function childrenOf(pid: number): number[] {
  return family(pid).slice(1);
}

/** CPU seconds (user + system) used so far by one process, without its children; 0 once it is gone. */
export function ownCpuSeconds(pid: number): number {
  try {
    // Fields after the command name, which may hold spaces, so split after its closing parenthesis.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/**
 * CPU seconds one process has run so far, to the nanosecond: the sum over its threads of the
 * scheduler's run time (`/proc/PID/task/TID/schedstat`, first field). `/proc/PID/stat` counts in
 * ticks of 10 ms, which over a few hundred requests is several percent; a thread that has exited
 * is not counted. 0 once the process is gone.
 */
export function preciseCpuSeconds(pid: number): number {
  let nanoseconds = 0;
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0;
  }
  for (const thread of threads) {
    try {
      nanoseconds += Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // Exited between the listing and the read.
    }
  }
  return nanoseconds / 1e9;
}

/** CPU seconds (user + system) used so far by a process and its children. */
export function cpuSeconds(pid: number): number {
  return family(pid).reduce((sum, member) => sum + ownCpuSeconds(member), 0);
}

/** Resident set size in bytes of a process and its children. */
export function rssBytes(pid: number): number {
  let pages = 0;
  for (const member of family(pid)) {
    try {
      pages += Number(readFileSync(`/proc/${member}/statm`, 'utf8').split(' ')[1]);
    } catch {
      // Gone.
    }
  }
  return pages * PAGE_SIZE;
}
