import type { RequestView } from '../api/types';
import { DASH, formatCount, formatMs, formatTime } from '../lib/format';
import { Link, consolePath } from '../lib/router';
import type { CacheLoss } from '../lib/session-summary';
import { DataTable, type Column } from './data-table';
import { AffinityBadge, StatusBadge } from './status-badge';

const COLUMNS: readonly Column[] = [
  { label: '#' },
  { label: 'Time' },
  { label: 'Credential' },
  { label: 'Affinity' },
  { label: 'Prompt', numeric: true },
  { label: 'Cached', numeric: true },
  { label: 'Completion', numeric: true },
  { label: 'Latency', numeric: true },
  { label: 'Status' },
];

export function SessionTurnsTable({ turns, losses }: { turns: readonly RequestView[]; losses: ReadonlyMap<number, CacheLoss> }) {
  return (
    <DataTable columns={COLUMNS}>
      {turns.map((turn, index) => {
        const loss = losses.get(index);
        const shifted = turn.affinity === 'moved' || turn.affinity === 'overflow';
        return (
          <tr key={turn.id} data-request-id={turn.id} className={loss !== undefined ? 'row-lost' : shifted ? 'row-moved' : ''}>
            <td>
              <Link to={consolePath('requests', turn.id)} title={turn.id}>
                {index + 1}
              </Link>
            </td>
            <td className="nowrap">{formatTime(turn.created_at)}</td>
            <td>{turn.upstream ?? DASH}</td>
            <td>
              <AffinityBadge affinity={turn.affinity} />
            </td>
            <td className="num">{formatCount(turn.prompt_tokens)}</td>
            <td className="num">
              {formatCount(turn.cached_tokens)}
              {loss !== undefined && <div className="loss-note">cache lost — {loss.reason}</div>}
            </td>
            <td className="num">{formatCount(turn.completion_tokens)}</td>
            <td className="num nowrap">{formatMs(turn.latency_ms)}</td>
            <td>
              <StatusBadge status={turn.status} />
              {turn.error_code !== null && <span className="cell-sub"> {turn.error_code}</span>}
            </td>
          </tr>
        );
      })}
    </DataTable>
  );
}
