import type { Credential } from '../api/types';
import { formatTime } from '../lib/format';

/** healthy / cooling until <local time> (probing: its cooldown ended, one request is trying it) / failed: reason / disabled, as a badge. */
export function CredentialStateBadge({ credential }: { credential: Credential }) {
  const text =
    credential.state === 'cooling'
      ? credential.until === null
        ? 'probing'
        : `cooling until ${formatTime(credential.until)}`
      : credential.state === 'failed'
        ? `failed${credential.reason === null ? '' : `: ${credential.reason}`}`
        : credential.state;
  const tone = { healthy: 'ok', cooling: 'warn', failed: 'bad', disabled: 'neutral' }[credential.state];
  return (
    <span className={`badge badge-${tone}`} title={credential.state === 'cooling' && credential.reason !== null ? credential.reason : undefined}>
      {text}
    </span>
  );
}
