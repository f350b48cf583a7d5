import type { CredentialAccount } from '../api/console-types';
import { DASH, formatTime } from '../lib/format';

/** An OAuth account's own state: plan, access token expiry, the quota the upstream last reported. */
export function CredentialAccountDetails({ account }: { account: CredentialAccount }) {
  const quota = account.quota ?? null;
  const entries = quota === null ? [] : Object.entries(quota).sort(([left], [right]) => left.localeCompare(right));
  return (
    <div className="account">
      <div>
        <span className="muted">plan</span> {account.plan_type ?? DASH}
      </div>
      <div>
        <span className="muted">access token expires</span> {formatTime(account.access_token_expires_at)}
      </div>
      {account.last_refresh !== undefined && (
        <div>
          <span className="muted">last refresh</span> {formatTime(account.last_refresh)}
        </div>
      )}
      {entries.length === 0 ? (
        <div>
          <span className="muted">quota</span> {DASH}
        </div>
      ) : (
        <details className="quota">
          <summary>
            quota <span className="muted">reported {formatTime(account.quota_reported_at)}</span>
          </summary>
          <dl className="kv">
            {entries.map(([key, value]) => (
              <div key={key}>
                <dt>{key.replace(/^x-codex-/, '')}</dt>
                <dd>{value}</dd>
              </div>
            ))}
          </dl>
        </details>
      )}
    </div>
  );
}
