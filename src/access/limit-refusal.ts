import { GatewayError } from '../errors/index.js';
import type { PlannedMeter } from './limit-plan.js';

const DESCRIPTIONS = {
  rpm: (limit: number) => `${limit} requests per minute`,
  tpm: (limit: number) => `${limit} tokens per minute`,
  maxConcurrent: (limit: number) => `${limit} requests in flight`,
  tokensPerDay: (limit: number) => `${limit} tokens per day (UTC)`,
  tokensPerMonth: (limit: number) => `${limit} tokens per month (UTC)`,
  tokensTotal: (limit: number) => `${limit} tokens in all`,
  usdPerDay: (limit: number) => `$${limit} per day (UTC)`,
  usdPerMonth: (limit: number) => `$${limit} per month (UTC)`,
} as const;

/** A request in flight has no reset time: a slot frees when any request ends. */
const IN_FLIGHT_RETRY_SECONDS = 1;
/** A total quota never resets; its Retry-After still has to say something: a day. */
const NEVER_RETRY_SECONDS = 86_400;

/**
 * The 429 for the meter that refused: `rate_limit_exceeded` for a rate limit, `quota_exceeded`
 * for a quota, naming the limit and its holder, with the seconds until it resets as Retry-After
 * (and, for a quota, the time in the message).
 */
export function refusal(planned: PlannedMeter, now: number): GatewayError {
  const { name, limit, holder, periodEnd } = planned;
  const what = DESCRIPTIONS[name](limit);
  if (name === 'rpm' || name === 'tpm' || name === 'maxConcurrent') {
    const retryAfterSeconds = periodEnd === null ? IN_FLIGHT_RETRY_SECONDS : secondsUntil(periodEnd, now);
    const when = periodEnd === null ? 'when one of them ends' : `in ${retryAfterSeconds} s`;
    return new GatewayError('rate_limit_exceeded', `Rate limit reached: ${what} for ${holder.label}. Try again ${when}.`, { retryAfterSeconds });
  }
  if (periodEnd === null) {
    return new GatewayError('quota_exceeded', `Quota exceeded: ${what} for ${holder.label}. This quota never resets; an operator can raise it.`, {
      retryAfterSeconds: NEVER_RETRY_SECONDS,
    });
  }
  return new GatewayError('quota_exceeded', `Quota exceeded: ${what} for ${holder.label}. It resets at ${new Date(periodEnd).toISOString()}.`, {
    retryAfterSeconds: secondsUntil(periodEnd, now),
  });
}

function secondsUntil(time: number, now: number): number {
  return Math.max(1, Math.ceil((time - now) / 1000));
}
