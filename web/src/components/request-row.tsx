import { memo } from 'react';
import type { RequestView } from '../api/types';
import { DASH, formatMs, formatTime } from '../lib/format';
import { Link, consolePath } from '../lib/router';
import { StatusBadge } from './status-badge';

export function tokenCounts(row: Pick<RequestView, 'prompt_tokens' | 'cached_tokens' | 'completion_tokens'>): string {
  if (row.prompt_tokens === null && row.completion_tokens === null) return DASH;
  const show = (value: number | null) => (value === null ? DASH : value.toLocaleString());
  return `${show(row.prompt_tokens)} / ${show(row.cached_tokens)} / ${show(row.completion_tokens)}`;
}

/**
 * One request. Memoised on the row object: a live poll hands unchanged rows back as the same
 * objects, so only new and changed rows render again.
 */
export const RequestRow = memo(function RequestRow({ row }: { row: RequestView }) {
  return (
    <tr data-request-id={row.id}>
      <td className="nowrap">
        <Link to={consolePath('requests', row.id)} title={row.id}>
          {formatTime(row.created_at)}
        </Link>
      </td>
      <td>
        <StatusBadge status={row.status} />
      </td>
      <td>{row.model ?? DASH}</td>
      <td className="nowrap">{row.endpoint}</td>
      <td className="truncate">
        {row.session_id === null ? (
          DASH
        ) : (
          <Link to={consolePath('sessions', row.session_id)} title={row.session_id}>
            {row.session_id}
          </Link>
        )}
      </td>
      <td>
        <div className="mono">{row.token_id ?? DASH}</div>
        {row.team !== null && <div className="cell-sub">{row.project === null ? row.team : `${row.team} / ${row.project}`}</div>}
      </td>
      <td>{row.upstream ?? DASH}</td>
      <td className="num nowrap">{formatMs(row.latency_ms)}</td>
      <td className="num nowrap">{tokenCounts(row)}</td>
      <td>{row.error_code ?? ''}</td>
    </tr>
  );
});
