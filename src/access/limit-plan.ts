import type { Limits } from '../store/index.js';
import type { Meter } from '../state/index.js';
import type { LimitHolder } from './limit-holders.js';

export type LimitName = keyof Limits;

/** A meter of a request's admission, with what the refusal message and the headers need of it. */
export interface PlannedMeter {
  readonly meter: Meter;
  readonly holder: LimitHolder;
  readonly name: LimitName;
  readonly limit: number;
  /** Where its period starts (0 for a total) and ends (null: never, or a concurrency limit). */
  readonly periodStart: number;
  readonly periodEnd: number | null;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
/** A total quota's counter lives this long after its last change; then it is rebuilt from the log. */
const TOTAL_TTL_MS = 35 * 24 * HOUR_MS;

/**
 * The meters one request's admission charges, for every limit of every holder: a request counted
 * per minute, its estimated tokens reserved per minute and against token quotas, a slot among the
 * requests in flight, and nothing yet against dollar quotas (the price is known once usage is).
 * Periods are UTC calendar periods on this process's clock (replicas keep their clocks in step
 * with NTP; see docs/limits.md), named in the keys so a new period starts from zero.
 */
export function planAdmission(holders: readonly LimitHolder[], requestId: string, estimatedTokens: number, now: number, leaseMs: number): PlannedMeter[] {
  const planned: PlannedMeter[] = [];
  const minute = Math.floor(now / MINUTE_MS) * MINUTE_MS;
  const day = utcDayStart(now);
  const month = utcMonthStart(now);
  for (const holder of holders) {
    const { limits } = holder;
    const add = (name: LimitName, key: string, amount: number, periodStart: number, periodEnd: number | null, extra: Partial<Meter> = {}): void => {
      const limit = limits[name];
      if (limit === undefined) return;
      const ttlMs = extra.slot !== undefined ? leaseMs : periodEnd === null ? TOTAL_TTL_MS : counterTtl(periodEnd, now);
      planned.push({ meter: { key: `${holder.key}:${key}`, amount, limit, ttlMs, ...extra }, holder, name, limit, periodStart, periodEnd });
    };
    const quota = { needsSeed: true };
    add('rpm', `rpm:${minute}`, 1, minute, minute + MINUTE_MS);
    add('tpm', `tpm:${minute}`, estimatedTokens, minute, minute + MINUTE_MS);
    add('maxConcurrent', 'in-flight', 1, 0, null, { slot: requestId });
    add('tokensPerDay', `tokens:day:${day}`, estimatedTokens, day, nextUtcDay(day), quota);
    add('tokensPerMonth', `tokens:month:${month}`, estimatedTokens, month, nextUtcMonth(month), quota);
    add('tokensTotal', 'tokens:total', estimatedTokens, 0, null, quota);
    add('usdPerDay', `usd:day:${day}`, 0, day, nextUtcDay(day), quota);
    add('usdPerMonth', `usd:month:${month}`, 0, month, nextUtcMonth(month), quota);
  }
  return planned;
}

/**
 * What settles an admission once the request's usage is known: the difference between the tokens
 * it used and those reserved, its cost against dollar quotas, and its slot given back. Never
 * refused; a period that has ended is still adjusted (its counter lives a while past its end).
 */
export function planSettlement(admitted: readonly PlannedMeter[], reservedTokens: number, usedTokens: number, costUsd: number, now: number): Meter[] {
  const meters: Meter[] = [];
  for (const { meter, name, periodEnd } of admitted) {
    const ttlMs = meter.slot !== undefined ? meter.ttlMs : periodEnd === null ? TOTAL_TTL_MS : counterTtl(periodEnd, now);
    let amount = 0;
    if (name === 'maxConcurrent') amount = -1;
    else if (name === 'tpm' || name === 'tokensPerDay' || name === 'tokensPerMonth' || name === 'tokensTotal') amount = usedTokens - reservedTokens;
    else if (name === 'usdPerDay' || name === 'usdPerMonth') amount = costUsd;
    if (amount === 0) continue;
    meters.push({ key: meter.key, amount, limit: null, ttlMs, ...(meter.slot === undefined ? {} : { slot: meter.slot }) });
  }
  return meters;
}

/** A counter outlives its period by a little, so a settlement just after the end still finds it. */
function counterTtl(periodEnd: number, now: number): number {
  return Math.max(0, periodEnd - now) + (periodEnd - now < HOUR_MS ? MINUTE_MS : HOUR_MS);
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
