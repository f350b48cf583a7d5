import { memo } from 'react';
import type { CredentialAction } from '../api/credentials';
import type { Credential } from '../api/types';
import { DASH, formatPercent, formatTime } from '../lib/format';
import { CredentialAccountDetails } from './credential-account';
import { CredentialStateBadge } from './credential-state';

interface CredentialRowProps {
  credential: Credential;
  busy: boolean;
  onAction: (id: string, action: CredentialAction) => void;
}

function errorRate(credential: Credential): string {
  const recent = credential.recent;
  if (recent === undefined || recent.attempts === 0) return DASH;
  const minutes = Math.round(recent.window_seconds / 60);
  return `${formatPercent(recent.failures, recent.attempts)} (${recent.failures}/${recent.attempts} in ${minutes >= 1 ? `${minutes} min` : `${recent.window_seconds} s`})`;
}

/** The mean time to the upstream's answer over the same window as the error rate. */
function latency(credential: Credential): string {
  const mean = credential.recent?.mean_ms ?? null;
  return mean === null ? DASH : `${mean.toLocaleString('en-US')} ms`;
}

export const CredentialRow = memo(function CredentialRow({ credential, busy, onAction }: CredentialRowProps) {
  const disabled = credential.state === 'disabled';
  return (
    <tr data-credential-id={credential.id}>
      {/* Ids and the error rate may wrap (at hyphens, spaces), so that the table fits a laptop's screen. */}
      <td className="mono wrap">{credential.id}</td>
      <td>{credential.provider}</td>
      <td>
        <CredentialStateBadge credential={credential} />
      </td>
      <td className="nowrap">{credential.since === null ? 'start' : formatTime(credential.since)}</td>
      <td className="num">{credential.in_flight}</td>
      <td className="wrap">{errorRate(credential)}</td>
      <td className="num nowrap">{latency(credential)}</td>
      {/* One line, cut with an ellipsis: an upstream's error can be 200 characters; the whole of it is the title (on hover). */}
      <td className="last-error" title={credential.last_error ?? undefined}>
        <span className="clip">{credential.last_error ?? DASH}</span>
      </td>
      <td>{credential.origin}</td>
      <td className="wrap">{credential.account === null ? DASH : <CredentialAccountDetails account={credential.account} />}</td>
      <td className="actions">
        <button type="button" disabled={busy} onClick={() => onAction(credential.id, 'reset')}>
          Reset
        </button>
        <button
          type="button"
          disabled={busy}
          className={disabled ? '' : 'danger-quiet'}
          onClick={() => onAction(credential.id, disabled ? 'enable' : 'disable')}
        >
          {disabled ? 'Enable' : 'Disable'}
        </button>
      </td>
    </tr>
  );
});
