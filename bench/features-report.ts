import { median } from './load.js';
import { byRound, format, medianRatio, metricRows, renderTable, roundByRound, stateCpuRow, type MetricRow, type Report } from './report.js';
import type { TargetName } from './targets.js';

/** Issue 32's aim for every feature on: CPU per request, the Redis server's included, at most twice the floor's. */
const AIM = 2;

/** A target's CPU µs per request in each throughput round: its own process's, and its state store's (empty without one). */
export interface RoundCost {
  cpu: readonly number[];
  stateCpu: readonly number[];
}

/** Per round, the process's CPU per request plus its state store's: what a request costs the machine. */
export function withStateCpu(cost: RoundCost): number[] {
  if (cost.stateCpu.length === 0) return [...cost.cpu];
  if (cost.stateCpu.length !== cost.cpu.length) return [];
  return cost.cpu.map((value, index) => value + (cost.stateCpu[index] as number));
}

/** Per round, the state store's part of what a request costs (0 to 1); empty without one. */
export function stateShare(cost: RoundCost): number[] {
  const total = withStateCpu(cost);
  if (cost.stateCpu.length === 0 || total.length === 0) return [];
  return cost.stateCpu.map((value, index) => value / (total[index] as number));
}

/** The every-feature scenario's share of the report: its CPU per request against the floor, round by round. */
export interface FeaturesSection {
  /** Every feature on, gateway + Redis CPU per request ÷ the floor's, per throughput round. */
  cpuVsFloor: number[];
  /** The same, the gateway's CPU alone. */
  gatewayVsFloor: number[];
  /** Redis's CPU ÷ (gateway + Redis), per throughput round. */
  redisShare: number[];
  /** Plain chat (the `Switchyard` column) ÷ the floor, per throughput round, for comparison. */
  plainVsFloor: number[];
  /** How the scenario was built (bench/features-scenario.ts). */
  remarks: string[];
}

export function featuresSection(cost: (name: TargetName) => RoundCost | undefined, remarks: string[]): FeaturesSection {
  const floor = cost('bare');
  const features = cost('features');
  const plain = cost('switchyard');
  const floorCpu = floor === undefined ? [] : [...floor.cpu];
  return {
    cpuVsFloor: features === undefined ? [] : byRound(withStateCpu(features), floorCpu),
    gatewayVsFloor: features === undefined ? [] : byRound(features.cpu, floorCpu),
    redisShare: features === undefined ? [] : stateShare(features),
    plainVsFloor: plain === undefined ? [] : byRound(plain.cpu, floorCpu),
    remarks,
  };
}

/** The every-feature scenario's table: the floor and plain chat beside it, its ratios to the floor, and issue 32's aim checked. */
export function renderFeaturesSection(report: Report): string[] {
  const section = report.features;
  if (section === undefined) return [];
  const columns = (['bare', 'switchyard', 'features'] as const).filter((name) => report.figures[name] !== undefined);
  const featuresOnly = (text: string) => (name: TargetName) => (name === 'features' ? text : '–');
  const perRequest = (name: TargetName) => {
    const figure = report.figures[name];
    return figure === undefined ? Number.NaN : figure.cpuMicrosecondsPerRequest + (figure.stateCpuMicrosecondsPerRequest ?? 0);
  };
  const rows: MetricRow[] = [
    ...metricRows(report),
    stateCpuRow(report),
    ['CPU µs / request, gateway + Redis (medians)', (name) => format(perRequest(name))],
    [
      'CPU per request ÷ floor, gateway + Redis, median of rounds',
      (name) => (name === 'features' ? medianRatio(section.cpuVsFloor) : name === 'switchyard' ? medianRatio(section.plainVsFloor) : '–'),
    ],
    ['CPU per request ÷ floor, gateway alone, median of rounds', featuresOnly(medianRatio(section.gatewayVsFloor))],
    [
      "Redis's share of the CPU per request, median of rounds",
      featuresOnly(section.redisShare.length === 0 ? '–' : `${Math.round(median([...section.redisShare]) * 100)} %`),
    ],
  ];
  const label = report.figures.features?.label ?? 'every feature on';
  const lines = [
    '## Every feature on (issue 32)',
    '',
    "What a platform team runs: a chat model over a pool of 4 weighted credentials, Redis state, half the requests with `X-Session-Id` (session inference on for the rest), and every rate limit and quota on the token, its project and its team, none reached (see below). Measured in the same rounds as the targets above, taking turns with them. Its CPU per request is the gateway process's plus the Redis server's; ratios to the floor (the bare undici proxy) are taken within each round, then the median.",
    '',
    ...renderTable(report, columns, rows),
    '',
  ];
  if (section.cpuVsFloor.length > 0) lines.push(`- ${label} ÷ floor, gateway + Redis, CPU per request round by round: ${roundByRound(section.cpuVsFloor)}`);
  if (section.plainVsFloor.length > 0) lines.push(`- Switchyard (plain chat) ÷ floor, CPU per request round by round: ${roundByRound(section.plainVsFloor)}`);
  if (section.cpuVsFloor.length > 0) {
    const measured = median([...section.cpuVsFloor]);
    lines.push(
      `- Issue 32's aim, every feature on ≤ ${AIM}× the floor's CPU per request, Redis included: ${measured.toFixed(2)}× (${measured <= AIM ? 'holds' : 'DOES NOT HOLD'})`,
    );
  }
  lines.push(...section.remarks.map((remark) => `- ${remark}`), '');
  return lines;
}
