import type { UsageGroupBy } from '../api/types';
import { formatCount, formatUsd } from '../lib/format';
import type { GroupTotals } from '../lib/usage-series';
import { DataTable, type Column } from './data-table';

const COUNT_COLUMNS: readonly Column[] = [
  { label: 'Requests', numeric: true },
  { label: 'Errors', numeric: true },
  { label: 'Prompt tokens', numeric: true },
  { label: 'Cached tokens', numeric: true },
  { label: 'Completion tokens', numeric: true },
  { label: 'Cost', numeric: true },
];

export function UsageTotalsTable({ totals, groupBy }: { totals: readonly GroupTotals[]; groupBy: UsageGroupBy }) {
  return (
    <section aria-labelledby="usage-totals">
      <h2 id="usage-totals">Totals by {groupBy}</h2>
      <DataTable columns={[{ label: groupBy }, ...COUNT_COLUMNS]}>
        {totals.map((total) => (
          <tr key={total.group}>
            <td>{total.group}</td>
            <td className="num">{formatCount(total.requests)}</td>
            <td className="num">{formatCount(total.errors)}</td>
            <td className="num">{formatCount(total.prompt_tokens)}</td>
            <td className="num">{formatCount(total.cached_tokens)}</td>
            <td className="num">{formatCount(total.completion_tokens)}</td>
            <td className="num">{formatUsd(total.cost_usd)}</td>
          </tr>
        ))}
      </DataTable>
    </section>
  );
}
