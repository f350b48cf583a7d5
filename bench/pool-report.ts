import {
  byRound,
  cpuRatiosByRound,
  medianRatio,
  metricRows,
  renderTable,
  roundByRound,
  scenarioColumns,
  stateCpuRow,
  type MetricRow,
  type Report,
  type RoundCpu,
} from './report.js';
import type { PoolTargetName, TargetName } from './targets.js';

/** The pool scenario's share of the report: its targets and their CPU ratios taken within rounds. */
export interface PoolSection {
  /** The pool targets measured, in column order. */
  targets: PoolTargetName[];
  /**
   * Per pool target: its CPU per request ÷ the plain chat scenario's of the same build (Switchyard,
   * or for `baseline-pool` the baseline), within each throughput round: what the pool and sessions
   * add to a request in that build.
   */
  cpuVsPlain: Partial<Record<PoolTargetName, number[]>>;
  /** The same at the highest open-loop rate, within each latency round (where the rate was run). */
  cpuVsPlainOpenLoop: Partial<Record<PoolTargetName, number[]>>;
  /** `pool` ÷ `baseline-pool` within each throughput round (`--baseline`). */
  cpuVsBaselinePool?: number[];
  /** The open-loop rate of `cpuVsPlainOpenLoop`. */
  topRate: number;
  /** How the scenario was built, and what was skipped or compared with what (bench/pool-scenario.ts). */
  remarks: string[];
}

/** Each pool target's CPU per request ÷ its build's plain chat (`switchyard`, or for `baseline-pool` the baseline), within each round. */
export function poolSection(targets: PoolTargetName[], cpu: (name: TargetName) => RoundCpu | undefined, topRate: number, remarks: string[]): PoolSection {
  const vsPlain = cpuRatiosByRound(targets, cpu, (name) => (name === 'baseline-pool' ? 'baseline' : 'switchyard'));
  const pool = cpu('pool');
  const baselinePool = cpu('baseline-pool');
  const section: PoolSection = { targets, cpuVsPlain: vsPlain.throughput, cpuVsPlainOpenLoop: vsPlain.openLoop, topRate, remarks };
  if (pool !== undefined && baselinePool !== undefined) section.cpuVsBaselinePool = byRound(pool.throughput, baselinePool.throughput);
  return section;
}

/** The pool scenario's table: the plain chat scenario (and the baseline's) beside each pool variant. */
export function renderPoolSection(report: Report): string[] {
  const section = report.pool;
  if (section === undefined) return [];
  const columns = scenarioColumns(report, section.targets);
  const pool = (name: TargetName): name is PoolTargetName => (section.targets as TargetName[]).includes(name);
  const rows: MetricRow[] = [
    ...metricRows(report),
    stateCpuRow(report),
    ["CPU per request ÷ the same build's plain chat, median of rounds", (name) => (pool(name) ? medianRatio(section.cpuVsPlain[name]) : '–')],
    [
      `CPU per request @${section.topRate} RPS ÷ the same build's plain chat, median of rounds`,
      (name) => (pool(name) ? medianRatio(section.cpuVsPlainOpenLoop[name]) : '–'),
    ],
  ];
  if (section.cpuVsBaselinePool !== undefined) {
    rows.push([
      '`pool ×4, memory` CPU per request ÷ this column, median of rounds',
      (name) => (name === 'baseline-pool' ? medianRatio(section.cpuVsBaselinePool) : '–'),
    ]);
  }
  const lines = [
    '## Pool scenario',
    '',
    "Switchyard with a chat model over a pool of 4 credentials, strategy `weighted`; half the requests carry `X-Session-Id` (see below). Measured in the same rounds as the targets above, taking turns with them. The plain chat scenario (the `Switchyard` column above: 2 credentials, no session header, so a build with session inference infers one id for all its requests) is repeated for comparison, and the baseline's with `--baseline`: the plain chat of the same build is what each pool column's ratio divides by. Ratios are taken within each round, then the median.",
    '',
    ...renderTable(report, columns, rows),
    '',
  ];
  for (const name of section.targets) {
    const values = section.cpuVsPlain[name];
    const figure = report.figures[name];
    if (values !== undefined && values.length > 0 && figure !== undefined)
      lines.push(`- ${figure.label} ÷ the same build's plain chat, CPU per request round by round: ${roundByRound(values)}`);
  }
  if (section.cpuVsBaselinePool !== undefined)
    lines.push(`- pool ×4, memory ÷ the baseline's pool, CPU per request round by round: ${roundByRound(section.cpuVsBaselinePool)}`);
  lines.push(...section.remarks.map((remark) => `- ${remark}`), '');
  return lines;
}
