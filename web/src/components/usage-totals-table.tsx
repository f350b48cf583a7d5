import type { UsageGroupBy } from '../api/types';
import { formatCount, formatUsd } from '../lib/format';
import type { GroupTotals } from '../lib/usage-series';

export function UsageTotalsTable({ totals, groupBy }: { totals: readonly GroupTotals[]; groupBy: UsageGroupBy }) {
  return (
    <section aria-labelledby="usage-totals">
      <h2 id="usage-totals">Totals by {groupBy}</h2>
      <div className="table-wrap">
        <table className="data-table">
          <thead>
            <tr>
              <th scope="col">{groupBy}</th>
              <th scope="col" className="num">
                Requests
              </th>
              <th scope="col" className="num">
                Errors
              </th>
              <th scope="col" className="num">
                Prompt tokens
              </th>
              <th scope="col" className="num">
                Cached tokens
              </th>
              <th scope="col" className="num">
                Completion tokens
              </th>
              <th scope="col" className="num">
                Cost
              </th>
            </tr>
          </thead>
          <tbody>
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
          </tbody>
        </table>
      </div>
    </section>
  );
}
