import { GatewayError } from '../errors/index.js';
import type { CredentialHealth } from './credential-health.js';
import type { CatalogModel } from './model-catalog.js';

/** When none of a pool's credentials is cooling (all failed or disabled): an operator must act; ask again in a minute. */
const OUT_OF_SERVICE_RETRY_SECONDS = 60;

/**
 * The answer when no credential of the model may be used now: 429 `upstream_rate_limited` when
 * the pool is cooling because of rate limits, 429 `upstream_quota_exhausted` when because of spent
 * quotas, else 503 `no_upstream_available`. `Retry-After` is when the first cooldown ends (a probe
 * in flight: a second).
 */
export function unavailable(model: CatalogModel, health: CredentialHealth, now: number): GatewayError {
  let earliest: number | null = null;
  let rateLimited = false;
  let quotaSpent = false;
  for (const route of model.routes) {
    const status = health.status(route.credential.id);
    if (status.state !== 'cooling') continue;
    const until = status.until as number;
    if (earliest === null || until < earliest) earliest = until;
    if (status.cause === 'rate_limit') rateLimited = true;
    else if (status.cause === 'quota') quotaSpent = true;
  }
  if (model.routes.length === 0)
    return new GatewayError('no_upstream_available', `No upstream is configured for ${model.id}.`, { retryAfterSeconds: OUT_OF_SERVICE_RETRY_SECONDS });
  const retryAfterSeconds = earliest === null ? OUT_OF_SERVICE_RETRY_SECONDS : Math.max(1, Math.ceil((earliest - now) / 1_000));
  if (rateLimited)
    return new GatewayError('upstream_rate_limited', `Every credential of ${model.id} is cooling down after rate limits.`, { retryAfterSeconds });
  if (quotaSpent) return new GatewayError('upstream_quota_exhausted', `Every credential of ${model.id} is out of quota.`, { retryAfterSeconds });
  return new GatewayError('no_upstream_available', `No credential of ${model.id} is available now (cooling, failed or disabled).`, { retryAfterSeconds });
}
