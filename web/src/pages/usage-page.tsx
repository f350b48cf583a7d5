import { useEffect, useMemo, useState } from 'react';
import { errorMessage, isAbort } from '../api/http';
import { getUsage } from '../api/requests';
import { tokenNames } from '../api/tokens';
import type { UsageBucket, UsageGroupBy, UsageView } from '../api/types';
import { Empty, ErrorAlert, Loading } from '../components/states';
import { TimeChart } from '../components/time-chart';
import { UsageTotalsTable } from '../components/usage-totals-table';
import { navigate, useLocation } from '../lib/router';
import { RANGES, rangeStart, toSeries, type RangeKey } from '../lib/usage-series';

const GROUPS: UsageGroupBy[] = ['model', 'team', 'token', 'project'];
const isRange = (value: string | null): value is RangeKey => value !== null && value in RANGES;
const isBucket = (value: string | null): value is UsageBucket => value === 'hour' || value === 'day';
const isGroup = (value: string | null): value is UsageGroupBy => value !== null && (GROUPS as string[]).includes(value);

export function UsagePage() {
  // The controls live in the URL, like the requests filters: a chart is a shareable link.
  const { search } = useLocation();
  const rangeParam = search.get('range');
  const range: RangeKey = isRange(rangeParam) ? rangeParam : '24h';
  const bucketParam = search.get('bucket');
  const bucket: UsageBucket = isBucket(bucketParam) ? bucketParam : RANGES[range].bucket;
  const groupParam = search.get('group_by');
  const groupBy: UsageGroupBy = isGroup(groupParam) ? groupParam : 'model';

  const [usage, setUsage] = useState<UsageView | null>(null);
  const [error, setError] = useState<string | null>(null);

  const [names, setNames] = useState<ReadonlyMap<string, string>>(new Map());

  useEffect(() => {
    const abort = new AbortController();
    setUsage(null);
    setError(null);
    const asked = { from: rangeStart(range, bucket, Date.now()), bucket, group_by: groupBy };
    // Token groups are labelled with the tokens' names, fetched beside the usage.
    const named = groupBy === 'token' ? tokenNames(abort.signal) : Promise.resolve(new Map<string, string>());
    Promise.all([getUsage(asked, abort.signal), named]).then(
      ([answer, found]) => {
        setNames(found);
        setUsage(answer);
      },
      (failure: unknown) => {
        if (!isAbort(failure)) setError(errorMessage(failure));
      },
    );
    return () => abort.abort();
  }, [range, bucket, groupBy]);

  const series = useMemo(() => (usage === null ? null : toSeries(usage, names)), [usage, names]);

  const change = (next: { range?: RangeKey; bucket?: UsageBucket; group_by?: UsageGroupBy }) => {
    const nextRange = next.range ?? range;
    // A new range starts from its own bucket; an explicit bucket choice is kept otherwise.
    const nextBucket = next.bucket ?? (next.range !== undefined ? RANGES[nextRange].bucket : bucket);
    const params = new URLSearchParams({ range: nextRange, bucket: nextBucket, group_by: next.group_by ?? groupBy });
    navigate(`/console/usage?${params.toString()}`, { replace: true });
  };

  return (
    <>
      <h1>Usage</h1>
      <form className="filters usage-controls" onSubmit={(event) => event.preventDefault()} aria-label="Chart options">
        <div className="field">
          <label htmlFor="usage-range">Range</label>
          <select id="usage-range" value={range} onChange={(event) => isRange(event.target.value) && change({ range: event.target.value })}>
            {(Object.keys(RANGES) as RangeKey[]).map((key) => (
              <option key={key} value={key}>
                {RANGES[key].label}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="usage-bucket">Bucket</label>
          <select id="usage-bucket" value={bucket} onChange={(event) => isBucket(event.target.value) && change({ bucket: event.target.value })}>
            <option value="hour">hour</option>
            <option value="day">day</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor="usage-group">Group by</label>
          <select id="usage-group" value={groupBy} onChange={(event) => isGroup(event.target.value) && change({ group_by: event.target.value })}>
            {GROUPS.map((group) => (
              <option key={group} value={group}>
                {group}
              </option>
            ))}
          </select>
        </div>
      </form>
      <p className="hint">Buckets are UTC {bucket === 'day' ? 'days' : 'hours'}, shown in your time zone.</p>
      <ErrorAlert message={error} />
      {usage === null || series === null ? (
        error === null && <Loading />
      ) : series.totals.length === 0 ? (
        <Empty>No requests in this range.</Empty>
      ) : (
        <>
          <div className="charts">
            <TimeChart title="Requests" xs={series.xs} labels={series.groups} values={series.requests} />
            <TimeChart title="Tokens" xs={series.xs} labels={series.groups} values={series.tokens} />
            <TimeChart title="Errors" xs={series.xs} labels={series.groups} values={series.errors} />
          </div>
          <UsageTotalsTable totals={series.totals} groupBy={groupBy} />
        </>
      )}
    </>
  );
}
