import type { MessagesFigures } from './messages-scenario.js';
import type { NativeFigures } from './native-scenario.js';
import type { CoreNoise } from './machine-noise.js';
import type { FeaturesSection } from './features-report.js';
import { median } from './load.js';
import type { LimitsSection } from './limits-report.js';
import type { PoolSection } from './pool-report.js';
import type { TargetName } from './targets.js';

export interface TargetFigures {
  label: string;
  requestsPerSecond: number;
  cpuMicrosecondsPerRequest: number;
  p50Ms: number;
  openLoop: Record<number, { p99Ms: number; failed: number }>;
  streamFirstByteMs: number;
  streamTotalMs: number;
  bytesPerStream: number | null;
  streamsCompleted: number | null;
  idleRssBytes: number;
  peakRssBytes: number;
  failures: number;
  /** CPU of the state store (Redis) per request through this target, when it has one. */
  stateCpuMicrosecondsPerRequest?: number;
}

/** Switchyard's figures taken within each round, against the target measured beside it. */
export interface PairedRounds {
  /** Switchyard's RPS ÷ the floor's, per throughput round. */
  rpsVsFloor: number[];
  /** Switchyard's p99 − direct's, per latency round, by open-loop rate. */
  p99OverheadMs: Record<number, number[]>;
  /** Switchyard's CPU per request ÷ the baseline build's, per throughput round (`--baseline`). */
  cpuVsBaseline?: number[];
}

export interface Report {
  date: string;
  mode: string;
  rounds: { throughput: number; latency: number };
  rates: number[];
  paired: PairedRounds | null;
  concurrentStreams: number;
  figures: Partial<Record<TargetName, TargetFigures>>;
  /** The pool scenario (bench/pool-scenario.ts), unless skipped with `--no-pool`. */
  pool?: PoolSection;
  /** The limits scenario (bench/limits-scenario.ts), unless skipped with `--no-limits`. */
  limits?: LimitsSection;
  /** The every-feature scenario (bench/features-scenario.ts), unless skipped with `--no-features` or for want of Redis. */
  features?: FeaturesSection;
  /** The native passthrough scenario (bench/native-scenario.ts), unless skipped with `--no-native`. */
  native?: NativeFigures;
  /** The Messages scenario (bench/messages-scenario.ts), unless skipped with `--no-messages`. */
  messages?: MessagesFigures;
  machineNoise: { before: CoreNoise[]; after: CoreNoise[] };
  notes: string[];
}

const ORDER: TargetName[] = ['direct', 'nginx', 'bare', 'switchyard', 'baseline', 'portkey'];

export function format(value: number | null | undefined, digits = 0): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function ratio(numerator: number | undefined, denominator: number | undefined): string {
  if (numerator === undefined || denominator === undefined || !(denominator > 0)) return '–';
  return `${(numerator / denominator).toFixed(2)}×`;
}

export type MetricRow = [string, (name: TargetName) => string];

/** One target's CPU µs per request, round by round, before the medians are taken. */
export interface RoundCpu {
  /** CPU µs per request in each throughput round. */
  throughput: number[];
  /** CPU µs per request at the top open-loop rate in each latency round; empty when not run. */
  openLoop: number[];
}

/** Per target, its CPU per request ÷ that of the target `under` names, within each round (closed loop, and at the top open-loop rate). */
export function cpuRatiosByRound<Name extends TargetName>(
  targets: readonly Name[],
  cpu: (name: TargetName) => RoundCpu | undefined,
  under: (name: Name) => TargetName,
): { throughput: Partial<Record<Name, number[]>>; openLoop: Partial<Record<Name, number[]>> } {
  const ratios: { throughput: Partial<Record<Name, number[]>>; openLoop: Partial<Record<Name, number[]>> } = { throughput: {}, openLoop: {} };
  for (const name of targets) {
    const own = cpu(name);
    const base = cpu(under(name));
    if (own === undefined || base === undefined) continue;
    ratios.throughput[name] = byRound(own.throughput, base.throughput);
    ratios.openLoop[name] = byRound(own.openLoop, base.openLoop);
  }
  return ratios;
}

/** Ratios within each round: the host's drift is shared by the targets of one round (see run-bench.ts). */
export function byRound(numerators: readonly number[], denominators: readonly number[]): number[] {
  if (numerators.length !== denominators.length) return [];
  return numerators.map((value, index) => value / (denominators[index] as number));
}

export function medianRatio(values: readonly number[] | undefined): string {
  return values === undefined || values.length === 0 ? '–' : `${median([...values]).toFixed(2)}×`;
}

/** `1.02, 0.97, …`: a ratio's every round, for the notes under a table. */
export function roundByRound(values: readonly number[]): string {
  return values.map((value) => value.toFixed(2)).join(', ');
}

/** The rows every target's column has, in the main table and in the pool scenario's. */
export function metricRows(report: Report): MetricRow[] {
  const figure = (name: TargetName) => report.figures[name] as TargetFigures;
  const direct = report.figures.direct;
  const overhead = (value: number, base: number | undefined) => (base === undefined ? Number.NaN : value - base);
  return [
    ['non-streamed RPS @64 conns', (name) => format(figure(name).requestsPerSecond)],
    ['CPU µs / request (proxy process)', (name) => format(figure(name).cpuMicrosecondsPerRequest)],
    ['p50 latency @1 conn (ms)', (name) => format(figure(name).p50Ms, 3)],
    ['p50 overhead vs direct @1 conn (ms)', (name) => (name === 'direct' ? '–' : format(overhead(figure(name).p50Ms, direct?.p50Ms), 3))],
    ...report.rates.map((rate): [string, (name: TargetName) => string] => [
      `p99 @${rate} RPS open loop (ms)`,
      (name) =>
        `${format(figure(name).openLoop[rate]?.p99Ms, 2)}${(figure(name).openLoop[rate]?.failed ?? 0) > 0 ? ` (${figure(name).openLoop[rate]?.failed} failed)` : ''}`,
    ]),
    ...report.rates.map((rate): [string, (name: TargetName) => string] => [
      `p99 overhead @${rate} RPS (ms)`,
      (name) => (name === 'direct' ? '–' : format(overhead(figure(name).openLoop[rate]?.p99Ms ?? Number.NaN, direct?.openLoop[rate]?.p99Ms), 2)),
    ]),
    ['streamed first byte (ms)', (name) => format(figure(name).streamFirstByteMs, 3)],
    ['streamed first-byte overhead (ms)', (name) => (name === 'direct' ? '–' : format(overhead(figure(name).streamFirstByteMs, direct?.streamFirstByteMs), 3))],
    ['streamed total (ms)', (name) => format(figure(name).streamTotalMs, 3)],
    [`memory per stream @${report.concurrentStreams} streams (KB)`, (name) => format((figure(name).bytesPerStream ?? Number.NaN) / 1024, 1)],
    ['idle RSS (MB)', (name) => format(figure(name).idleRssBytes / 1_048_576, 1)],
    ['peak RSS (MB)', (name) => format(figure(name).peakRssBytes / 1_048_576, 1)],
  ];
}

/** A scenario's table columns: the plain chat scenario's (and the baseline's) for comparison, then its own measured targets. */
export function scenarioColumns(report: Report, targets: readonly TargetName[]): TargetName[] {
  return [...(['switchyard', 'baseline'] as const), ...targets].filter((name) => report.figures[name] !== undefined);
}

/** The row of a scenario whose Redis-state targets count Redis's CPU (`stateCpuSeconds`). */
export function stateCpuRow(report: Report): MetricRow {
  return ['Redis CPU µs / request (INFO cpu)', (name) => format((report.figures[name] as TargetFigures).stateCpuMicrosecondsPerRequest)];
}

/** A Markdown table of `rows` with one column per target. */
export function renderTable(report: Report, targets: readonly TargetName[], rows: readonly MetricRow[]): string[] {
  const label = (name: TargetName) => (report.figures[name] as TargetFigures).label;
  return [
    `| metric | ${targets.map(label).join(' | ')} |`,
    `|---|${targets.map(() => '---:').join('|')}|`,
    ...rows.map(([metric, cell]) => `| ${metric} | ${targets.map(cell).join(' | ')} |`),
  ];
}

/** The report as Markdown: figures per target, Switchyard's ratios, the issue's targets checked, then `sections` (the pool scenario's). */
export function renderReport(report: Report, sections: readonly string[] = []): string {
  const targets = ORDER.filter((name) => report.figures[name] !== undefined);
  const lines = [
    `# Switchyard overhead benchmark`,
    '',
    `${report.date} · mode ${report.mode} · ${report.rounds.throughput} throughput and ${report.rounds.latency} latency round(s), targets taking turns, medians · load generator on core 0, servers on core 1`,
    '',
    ...renderTable(report, targets, metricRows(report)),
    '',
  ];
  const switchyard = report.figures.switchyard;
  if (switchyard !== undefined) {
    lines.push(
      '## Switchyard ratios',
      '',
      'Against the floor: the median of the ratios within each round; the others from the medians above.',
      '',
      '| | vs nginx | vs bare undici proxy (Node floor) | vs Portkey |',
      '|---|---:|---:|---:|',
      `| RPS (higher is better) | ${ratio(switchyard.requestsPerSecond, report.figures.nginx?.requestsPerSecond)} | ${Number.isNaN(rpsVsFloor(report)) ? '–' : `${rpsVsFloor(report).toFixed(2)}×`} | ${ratio(switchyard.requestsPerSecond, report.figures.portkey?.requestsPerSecond)} |`,
      `| CPU per request (lower is better) | ${ratio(switchyard.cpuMicrosecondsPerRequest, report.figures.nginx?.cpuMicrosecondsPerRequest)} | ${ratio(switchyard.cpuMicrosecondsPerRequest, report.figures.bare?.cpuMicrosecondsPerRequest)} | ${ratio(switchyard.cpuMicrosecondsPerRequest, report.figures.portkey?.cpuMicrosecondsPerRequest)} |`,
      '',
      '## Targets (issue 3)',
      '',
      '| metric | must | aim | measured | must holds |',
      '|---|---|---|---:|:---:|',
      ...targetRows(report).map((row) => `| ${row.join(' | ')} |`),
      '',
    );
  }
  lines.push(...sections);
  if (report.notes.length > 0) lines.push('## Notes', '', ...report.notes.map((note) => `- ${note}`), '');
  return lines.join('\n');
}

function targetRows(report: Report): string[][] {
  const { switchyard, portkey, direct } = report.figures;
  if (switchyard === undefined) return [];
  const check = (measured: number, must: number, higherIsBetter: boolean) =>
    Number.isNaN(measured) ? 'n/a' : (higherIsBetter ? measured >= must : measured <= must) ? 'yes' : 'NO';
  const rpsVsPortkey = portkey === undefined ? Number.NaN : switchyard.requestsPerSecond / portkey.requestsPerSecond;
  const p50 = direct === undefined ? Number.NaN : switchyard.p50Ms - direct.p50Ms;
  const pairedP99 = report.paired?.p99OverheadMs[3000];
  const p99At3000 =
    pairedP99 !== undefined
      ? median(pairedP99)
      : direct?.openLoop[3000] === undefined || switchyard.openLoop[3000] === undefined
        ? Number.NaN
        : switchyard.openLoop[3000].p99Ms - direct.openLoop[3000].p99Ms;
  const firstByte = direct === undefined ? Number.NaN : switchyard.streamFirstByteMs - direct.streamFirstByteMs;
  const perStreamKb = (switchyard.bytesPerStream ?? Number.NaN) / 1024;
  const idleMb = switchyard.idleRssBytes / 1_048_576;
  return [
    ['RPS @64 vs bare undici proxy', '≥ 0.70×', '≥ 0.90×', `${rpsVsFloor(report).toFixed(2)}×`, check(rpsVsFloor(report), 0.7, true)],
    ['RPS vs Portkey', '≥ 8×', '≥ 12×', Number.isNaN(rpsVsPortkey) ? '–' : `${rpsVsPortkey.toFixed(1)}×`, check(rpsVsPortkey, 8, true)],
    ['CPU per request', '≤ 150 µs', '≤ 100 µs', `${format(switchyard.cpuMicrosecondsPerRequest)} µs`, check(switchyard.cpuMicrosecondsPerRequest, 150, false)],
    ['p50 overhead vs direct @1 conn', '≤ 0.4 ms', '≤ 0.2 ms', `${format(p50, 3)} ms`, check(p50, 0.4, false)],
    ['p99 overhead @3,000 RPS open loop', '≤ +5 ms', '≤ +3 ms', `${format(p99At3000, 2)} ms`, check(p99At3000, 5, false)],
    ['streamed first-byte overhead', '≤ 1 ms', '≤ 0.5 ms', `${format(firstByte, 3)} ms`, check(firstByte, 1, false)],
    ['memory per concurrent stream', '≤ 100 KB', '≤ 50 KB', `${format(perStreamKb, 1)} KB`, check(perStreamKb, 100, false)],
    ['idle RSS', '≤ 100 MB', '≤ 80 MB', `${format(idleMb, 1)} MB`, check(idleMb, 100, false)],
  ];
}

/** Switchyard's RPS ÷ the floor's: the median of the ratios within each round (see run-bench.ts on why). */
function rpsVsFloor(report: Report): number {
  if (report.paired !== null) return median(report.paired.rpsVsFloor);
  const { switchyard, bare } = report.figures;
  return switchyard === undefined || bare === undefined ? Number.NaN : switchyard.requestsPerSecond / bare.requestsPerSecond;
}
