import type { UsageCounts } from '../api/console-types';
import type { UsageBucket, UsageGroupBy, UsageRow, UsageView } from '../api/types';

export const TOP_GROUPS = 8;
export const OTHER = 'other';
const BUCKET_MS: Record<UsageBucket, number> = { hour: 3_600_000, day: 86_400_000 };

export interface GroupTotals extends UsageCounts {
  group: string;
}

export interface UsageSeries {
  /** Bucket starts, unix seconds (uPlot's time unit). */
  xs: number[];
  /** The groups charted: the top ones by requests, then "other" when there are more. */
  groups: string[];
  requests: number[][];
  tokens: number[][];
  errors: number[][];
  /** Every group, by requests. */
  totals: GroupTotals[];
}

/** `tokenNames`: a token group shows its name beside its id when the token has one. */
export function groupLabel(row: UsageRow, groupBy: UsageGroupBy, tokenNames: ReadonlyMap<string, string> = new Map()): string {
  switch (groupBy) {
    case 'token': {
      if (row.token_id === null || row.token_id === undefined) return '(no token)';
      const name = tokenNames.get(row.token_id);
      return name === undefined ? row.token_id : `${name} (${row.token_id})`;
    }
    case 'team':
      return row.team ?? '(no team)';
    case 'model':
      return row.model ?? '(no model)';
    case 'project':
      return row.project === null || row.project === undefined ? `${row.team ?? '(no team)'} / (no project)` : `${row.team ?? '?'} / ${row.project}`;
  }
}

/**
 * The usage answer as chart series: every bucket of the range (buckets the answer leaves out had
 * no requests: zeros), one series per top group and the rest summed as "other".
 */
export function toSeries(usage: UsageView, tokenNames?: ReadonlyMap<string, string>): UsageSeries {
  const step = BUCKET_MS[usage.bucket];
  const from = Math.floor(Date.parse(usage.from) / step) * step;
  const to = Date.parse(usage.to);
  const starts: number[] = [];
  for (let start = from; start < to; start += step) starts.push(start);

  const totals = new Map<string, GroupTotals>();
  for (const row of usage.data) {
    const group = groupLabel(row, usage.group_by, tokenNames);
    const total = totals.get(group) ?? { group, requests: 0, errors: 0, prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, cost_usd: null };
    total.requests += row.requests;
    total.errors += row.errors;
    total.prompt_tokens += row.prompt_tokens;
    total.completion_tokens += row.completion_tokens;
    total.cached_tokens += row.cached_tokens;
    if (row.cost_usd !== null) total.cost_usd = (total.cost_usd ?? 0) + row.cost_usd;
    totals.set(group, total);
  }
  const ranked = [...totals.values()].sort((left, right) => right.requests - left.requests || left.group.localeCompare(right.group));
  const charted = ranked.length > TOP_GROUPS + 1 ? [...ranked.slice(0, TOP_GROUPS).map((total) => total.group), OTHER] : ranked.map((total) => total.group);
  const seriesOf = new Map(charted.map((group, index) => [group, index]));

  const index = new Map(starts.map((start, position) => [start, position]));
  const zeros = () => charted.map(() => starts.map(() => 0));
  const requests = zeros();
  const tokens = zeros();
  const errors = zeros();
  for (const row of usage.data) {
    const position = index.get(Math.floor(Date.parse(row.start) / step) * step);
    if (position === undefined) continue;
    const series = seriesOf.get(groupLabel(row, usage.group_by)) ?? seriesOf.get(OTHER);
    if (series === undefined) continue;
    add(requests, series, position, row.requests);
    add(tokens, series, position, row.prompt_tokens + row.completion_tokens);
    add(errors, series, position, row.errors);
  }
  return { xs: starts.map((start) => start / 1000), groups: charted, requests, tokens, errors, totals: ranked };
}

function add(table: number[][], series: number, position: number, value: number): void {
  const values = table[series];
  if (values !== undefined) values[position] = (values[position] ?? 0) + value;
}

export interface RangeChoice {
  label: string;
  hours: number;
  bucket: UsageBucket;
}

export const RANGES = {
  '24h': { label: 'last 24 hours', hours: 24, bucket: 'hour' },
  '7d': { label: 'last 7 days', hours: 24 * 7, bucket: 'day' },
  '30d': { label: 'last 30 days', hours: 24 * 30, bucket: 'day' },
} as const satisfies Record<string, RangeChoice>;
export type RangeKey = keyof typeof RANGES;

/** The range's start on a bucket edge, so the first bucket is whole: N buckets, the last one filling. */
export function rangeStart(range: RangeKey, bucket: UsageBucket, now: number): string {
  const step = BUCKET_MS[bucket];
  const buckets = Math.ceil((RANGES[range].hours * 3_600_000) / step);
  return new Date(Math.floor(now / step) * step - (buckets - 1) * step).toISOString();
}
