import { median } from './load.js';
import {
  cpuRatiosByRound,
  medianRatio,
  metricRows,
  ratio,
  renderTable,
  roundByRound,
  scenarioColumns,
  stateCpuRow,
  type MetricRow,
  type Report,
  type RoundCpu,
} from './report.js';
import type { LimitsTargetName, TargetName } from './targets.js';

/** Issue 19: with `memory` state, limits keep Switchyard within 10 % of the build before them. */
const BOUND = 1.1;

/** The limits scenario's share of the report: its targets and their CPU ratios taken within rounds. */
export interface LimitsSection {
  /** The limits targets measured, in column order. */
  targets: LimitsTargetName[];
  /** Per limits target: its CPU per request ÷ `switchyard`'s (the same build and config without limits), within each throughput round: what the limits cost. */
  cpuVsSwitchyard: Partial<Record<LimitsTargetName, number[]>>;
  /** The same at the highest open-loop rate, within each latency round (where the rate was run). */
  cpuVsSwitchyardOpenLoop: Partial<Record<LimitsTargetName, number[]>>;
  /** Per limits target: its CPU per request ÷ the `--baseline` build's plain chat (before limits), within each throughput round. */
  cpuVsBaseline?: Partial<Record<LimitsTargetName, number[]>>;
  cpuVsBaselineOpenLoop?: Partial<Record<LimitsTargetName, number[]>>;
  /** The open-loop rate of the `…OpenLoop` ratios. */
  topRate: number;
  /** How the scenario was built, and what was skipped (bench/limits-scenario.ts). */
  remarks: string[];
}

export function limitsSection(targets: LimitsTargetName[], cpu: (name: TargetName) => RoundCpu | undefined, topRate: number, remarks: string[]): LimitsSection {
  const vsSwitchyard = cpuRatiosByRound(targets, cpu, () => 'switchyard');
  const section: LimitsSection = { targets, cpuVsSwitchyard: vsSwitchyard.throughput, cpuVsSwitchyardOpenLoop: vsSwitchyard.openLoop, topRate, remarks };
  if (cpu('baseline') !== undefined) {
    const vsBaseline = cpuRatiosByRound(targets, cpu, () => 'baseline');
    section.cpuVsBaseline = vsBaseline.throughput;
    section.cpuVsBaselineOpenLoop = vsBaseline.openLoop;
  }
  return section;
}

/** The limits scenario's table: the plain chat scenario (and the baseline's) beside each limits variant, then the bound checked. */
export function renderLimitsSection(report: Report): string[] {
  const section = report.limits;
  if (section === undefined) return [];
  const own = (name: TargetName): name is LimitsTargetName => (section.targets as TargetName[]).includes(name);
  const ratioOf = (ratios: Partial<Record<LimitsTargetName, number[]>> | undefined) => (name: TargetName) => (own(name) ? medianRatio(ratios?.[name]) : '–');
  const memoryVs = (under: TargetName) => (name: TargetName) =>
    own(name) ? ratio(report.figures[name]?.bytesPerStream ?? undefined, report.figures[under]?.bytesPerStream ?? undefined) : '–';
  const rows: MetricRow[] = [
    ...metricRows(report),
    ...(section.targets.includes('limits-redis') ? [stateCpuRow(report)] : []),
    ['CPU per request ÷ Switchyard (same build, no limits), median of rounds', ratioOf(section.cpuVsSwitchyard)],
    [`CPU per request @${section.topRate} RPS ÷ Switchyard (no limits), median of rounds`, ratioOf(section.cpuVsSwitchyardOpenLoop)],
    ["memory per stream ÷ Switchyard's (no limits)", memoryVs('switchyard')],
  ];
  if (section.cpuVsBaseline !== undefined) {
    rows.push(
      ['CPU per request ÷ the baseline (before limits), median of rounds', ratioOf(section.cpuVsBaseline)],
      [`CPU per request @${section.topRate} RPS ÷ the baseline, median of rounds`, ratioOf(section.cpuVsBaselineOpenLoop)],
      ["memory per stream ÷ the baseline's", memoryVs('baseline')],
    );
  }
  const lines = [
    '## Limits scenario (issue 19)',
    '',
    'The plain chat scenario (the `Switchyard` column) with a token whose token, project and team each have every rate limit and quota, all too high to trigger (see below), and priced models: each request is admitted by one atomic `charge` and settled when it ends. Measured in the same rounds as the targets above, taking turns with them; ratios are taken within each round, then the median. The `--baseline` build predates limits: its plain chat is the comparison.',
    '',
    ...renderTable(report, scenarioColumns(report, section.targets), rows),
    '',
  ];
  const label = (name: TargetName) => report.figures[name]?.label ?? name;
  for (const name of section.targets) {
    const vsSwitchyard = section.cpuVsSwitchyard[name];
    if (vsSwitchyard !== undefined && vsSwitchyard.length > 0)
      lines.push(`- ${label(name)} ÷ Switchyard (no limits), CPU per request round by round: ${roundByRound(vsSwitchyard)}`);
    const vsBaseline = section.cpuVsBaseline?.[name];
    if (vsBaseline !== undefined && vsBaseline.length > 0)
      lines.push(`- ${label(name)} ÷ the baseline, CPU per request round by round: ${roundByRound(vsBaseline)}`);
  }
  lines.push(boundLine(report, section), ...section.remarks.map((remark) => `- ${remark}`), '');
  return lines;
}

/** Issue 19's bound, `limits` (memory state) against the build before the issue: CPU per request, and memory per open stream. */
function boundLine(report: Report, section: LimitsSection): string {
  const baseline = report.figures.baseline;
  if (section.cpuVsBaseline === undefined || baseline === undefined) {
    return `- Issue 19's bound (memory state within ${Math.round((BOUND - 1) * 100)} % of the build before it) needs that build: run with \`--baseline DIR\`, a built checkout of the commit before the issue.`;
  }
  const cpu = section.cpuVsBaseline.limits ?? [];
  const cpuRatio = cpu.length === 0 ? Number.NaN : median([...cpu]);
  const memory = report.figures.limits?.bytesPerStream ?? null;
  const memoryRatio = memory === null || baseline.bytesPerStream === null ? Number.NaN : memory / baseline.bytesPerStream;
  const holds = (value: number) => (Number.isNaN(value) ? 'n/a' : value <= BOUND ? 'holds' : 'DOES NOT HOLD');
  return `- Issue 19's bound, \`limits\` (memory state) within ${Math.round((BOUND - 1) * 100)} % of ${baseline.label}: CPU per request ${medianRatio(cpu)} (${holds(cpuRatio)}); memory per open stream ${ratio(memory ?? undefined, baseline.bytesPerStream ?? undefined)} (${holds(memoryRatio)}). One run's closed-loop CPU ratio swings by more than 10 % on these machines (docs/performance.md): read it over several runs, beside the ratio at ${section.topRate} RPS.`;
}
