import type { Limits } from '../store/index.js';
import type { Meter } from '../state/index.js';
import type { LimitHolder } from './limit-holders.js';

export type LimitName = keyof Limits;

/** What a meter counts, which decides the amount a request charges it. */
export type Quantity = 'requests' | 'tokens' | 'usd' | 'slots';

/**
 * One limit of one holder in the current minute: the meter's key and lifetime, and what the
 * refusal message and the headers need. The same for every request of the minute.
 */
export interface PlannedMeter {
  readonly key: string;
  /** The holder's key: a holder's counters are one group in the state (one hash in Redis). */
  readonly group: string;
  readonly holder: LimitHolder;
  readonly name: LimitName;
  readonly limit: number;
  readonly quantity: Quantity;
  /** Where its period starts (0 for a total) and ends (null: never, or a concurrency limit). */
  readonly periodStart: number;
  readonly periodEnd: number | null;
  /** A counter's lifetime after a change this minute, or a slot's lease. */
  readonly ttlMs: number;
  /** A quota: rebuilt from the request log when the state does not have it. */
  readonly needsSeed: boolean;
}

/** Every meter of a set of holders, for one UTC minute. */
export interface MeterPlan {
  readonly minute: number;
  readonly entries: readonly PlannedMeter[];
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
/** A total quota's counter lives this long after its last change; then it is rebuilt from the log. */
const TOTAL_TTL_MS = 35 * 24 * HOUR_MS;

/**
 * The meters of every limit of every holder, for the minute containing `now`: a request counted
 * per minute, its tokens per minute and against token quotas, a slot among the requests in
 * flight, its cost against dollar quotas. Periods are UTC calendar periods on this process's
 * clock (replicas keep their clocks in step with NTP; see docs/limits.md), named in the keys so a
 * new period starts from zero. Built once a minute per set of holders (see MeterPlans): the keys
 * are the same strings from one request to the next, so maps and Redis never see a new one.
 */
export function planMinute(holders: readonly LimitHolder[], now: number, leaseMs: number): MeterPlan {
  const entries: PlannedMeter[] = [];
  const minute = Math.floor(now / MINUTE_MS) * MINUTE_MS;
  const day = utcDayStart(now);
  const month = utcMonthStart(now);
  for (const holder of holders) {
    const { limits } = holder;
    const add = (name: LimitName, suffix: string, quantity: Quantity, periodStart: number, periodEnd: number | null): void => {
      const limit = limits[name];
      if (limit === undefined) return;
      const ttlMs = quantity === 'slots' ? leaseMs : periodEnd === null ? TOTAL_TTL_MS : counterTtl(periodEnd, minute);
      const needsSeed = name !== 'rpm' && name !== 'tpm' && name !== 'maxConcurrent';
      entries.push({ key: `${holder.key}:${suffix}`, group: holder.key, holder, name, limit, quantity, periodStart, periodEnd, ttlMs, needsSeed });
    };
    add('rpm', `rpm:${minute}`, 'requests', minute, minute + MINUTE_MS);
    add('tpm', `tpm:${minute}`, 'tokens', minute, minute + MINUTE_MS);
    add('maxConcurrent', 'in-flight', 'slots', 0, null);
    add('tokensPerDay', `tokens:day:${day}`, 'tokens', day, nextUtcDay(day));
    add('tokensPerMonth', `tokens:month:${month}`, 'tokens', month, nextUtcMonth(month));
    add('tokensTotal', 'tokens:total', 'tokens', 0, null);
    add('usdPerDay', `usd:day:${day}`, 'usd', day, nextUtcDay(day));
    add('usdPerMonth', `usd:month:${month}`, 'usd', month, nextUtcMonth(month));
  }
  return { minute, entries };
}

/** The current minute's plan of each set of holders (a principal's, stable until the token cache reloads). */
export class MeterPlans {
  private readonly plans = new WeakMap<readonly LimitHolder[], MeterPlan>();

  constructor(private readonly leaseMs: number) {}

  of(holders: readonly LimitHolder[], now: number): MeterPlan {
    const plan = this.plans.get(holders);
    if (plan !== undefined && now >= plan.minute && now < plan.minute + MINUTE_MS) return plan;
    const fresh = planMinute(holders, now, this.leaseMs);
    this.plans.set(holders, fresh);
    return fresh;
  }
}

/**
 * What settles an admission once the request's usage is known: the difference between the tokens
 * it used and those reserved, its cost against dollar quotas, and its slot given back by the
 * owner that took it. Never refused; a period that has ended is still adjusted (its counter lives
 * a while past its end).
 */
export function settlementMeters(entries: readonly PlannedMeter[], owner: string, reservedTokens: number, usedTokens: number, costUsd: number): Meter[] {
  const meters: Meter[] = [];
  for (let index = 0; index < entries.length; index++) {
    const entry = entries[index] as PlannedMeter;
    const { quantity } = entry;
    const amount = quantity === 'slots' ? -1 : quantity === 'tokens' ? usedTokens - reservedTokens : quantity === 'usd' ? costUsd : 0;
    if (amount === 0) continue;
    // A counter the state lost (Redis restarted empty) stays absent, to be rebuilt from the log,
    // which will count this request's row: adjusting it would start it again from this amount.
    meters.push(
      quantity === 'slots'
        ? { key: entry.key, group: entry.group, amount, limit: null, ttlMs: entry.ttlMs, owner }
        : { key: entry.key, group: entry.group, amount, limit: null, ttlMs: entry.ttlMs, ifPresent: true },
    );
  }
  return meters;
}

/** A counter outlives its period by a little, so a settlement just after the end still finds it. */
function counterTtl(periodEnd: number, from: number): number {
  const left = Math.max(0, periodEnd - from);
  return left + (left <= MINUTE_MS ? MINUTE_MS : HOUR_MS);
}

export function utcDayStart(time: number): number {
  const date = new Date(time);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
}

export function utcMonthStart(time: number): number {
  const date = new Date(time);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

function nextUtcDay(dayStart: number): number {
  return dayStart + 24 * HOUR_MS;
}

function nextUtcMonth(monthStart: number): number {
  const date = new Date(monthStart);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}
