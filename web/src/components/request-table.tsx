import type { RequestView } from '../api/types';
import { RequestRow } from './request-row';

export function RequestTable({ rows }: { rows: readonly RequestView[] }) {
  return (
    <div className="table-wrap">
      <table className="data-table">
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Status</th>
            <th scope="col">Model</th>
            <th scope="col">Endpoint</th>
            <th scope="col">Session</th>
            <th scope="col">Token / team</th>
            <th scope="col">Upstream</th>
            <th scope="col" className="num">
              Latency
            </th>
            <th scope="col" className="num" title="prompt / cached / completion">
              Tokens (p / c / o)
            </th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <RequestRow key={row.id} row={row} />
          ))}
        </tbody>
      </table>
    </div>
  );
}
