import { memo } from 'react';
import type { Token } from '../api/types';
import { DASH, formatTime } from '../lib/format';
import { limitsSummary } from '../lib/limits';

interface TokenRowProps {
  token: Token;
  onEdit: (token: Token) => void;
  onRevoke: (token: Token) => void;
}

export const TokenRow = memo(function TokenRow({ token, onEdit, onRevoke }: TokenRowProps) {
  return (
    <tr data-token-id={token.id}>
      <td>
        <div className="cell-main">{token.name ?? <span className="muted">(no name)</span>}</div>
        <div className="cell-sub mono">{token.id}</div>
      </td>
      <td>{token.team}</td>
      <td>{token.project ?? DASH}</td>
      <td className="wrap scopes-cell">{token.scopes.join(', ')}</td>
      <td className="wrap">{token.models === null ? 'all' : token.models.join(', ')}</td>
      <td className="nowrap">{limitsSummary(token.limits)}</td>
      <td className="nowrap">{formatTime(token.last_used_at)}</td>
      <td className="nowrap">{token.expires_at === null ? 'never' : formatTime(token.expires_at)}</td>
      <td>
        <span className={`badge badge-${token.status}`}>{token.status}</span>
      </td>
      <td className="actions">
        {token.status !== 'revoked' && (
          <>
            <button type="button" onClick={() => onEdit(token)}>
              Edit
            </button>
            <button type="button" className="danger-quiet" onClick={() => onRevoke(token)}>
              Revoke
            </button>
          </>
        )}
      </td>
    </tr>
  );
});
