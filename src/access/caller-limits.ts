import type { GatewayError } from '../errors/index.js';
import type { ChargeOutcome, Meter, SharedState } from '../state/index.js';
import type { LimitHolder, SpendMatch } from './limit-holders.js';
import { admissionMeters, MeterPlans, planMinute, settlementMeters, type PlannedMeter } from './limit-plan.js';
import { refusal } from './limit-refusal.js';
import { rateLimitHeaders } from './rate-limit-headers.js';

/** What the request log shows a holder spent in a period: tokens (prompt + completion) and dollars. */
export interface Spending {
  tokens: number;
  usd: number;
}

/** Reads the spending of a holder from durable records: the request log, with what is queued for it. */
export type SpendLedger = (match: SpendMatch, fromMs: number, toMs: number) => Promise<Spending>;

/** A request let through: what it holds until it is settled. */
export interface Admission {
  readonly planned: readonly PlannedMeter[];
  readonly requestId: string;
  readonly reservedTokens: number;
}

/** The decision on a request: admitted (and then settled) or refused; either way the headers its response carries (`[name, value, …]`). */
export type AdmissionResult =
  | { readonly admission: Admission; readonly refusal: null; readonly headers: string[] }
  | { readonly admission: null; readonly refusal: GatewayError; readonly headers: string[] };

export interface CallerLimitsOptions {
  state: SharedState;
  ledger: SpendLedger;
  /** Told when the state could not be reached (requests are then let through) or a settlement was lost. */
  onError: (error: unknown) => void;
  /** How long a slot among the requests in flight is held at most: what a crashed process's slots cost. */
  leaseMs?: number;
  now?: () => number;
}

const DEFAULT_LEASE_MS = 3_600_000;
const ERROR_REPORT_INTERVAL_MS = 10_000;
const ADMITTED_WITHOUT_STATE: AdmissionResult = { admission: { planned: [], requestId: '', reservedTokens: 0 }, refusal: null, headers: [] };

/**
 * The caller's rate limits and quotas (token, project and team; the strictest applies). A request
 * is admitted by one atomic `charge` of every meter of every holder (one round trip with Redis),
 * refused with the first limit already reached, and settled when its usage is known. Settlements
 * of requests that end together go to the state in one charge. Quota counters the state does not
 * have (a fresh process, a Redis that lost them) are rebuilt from the request log before counting.
 */
export class CallerLimits {
  private readonly state: SharedState;
  private readonly ledger: SpendLedger;
  private readonly onError: (error: unknown) => void;
  private readonly leaseMs: number;
  private readonly plans: MeterPlans;
  private readonly now: () => number;
  private pending: Meter[] = [];
  private flushing: Promise<void> | null = null;
  private lastErrorReport = Number.NEGATIVE_INFINITY;

  constructor(options: CallerLimitsOptions) {
    this.state = options.state;
    this.ledger = options.ledger;
    this.onError = options.onError;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.plans = new MeterPlans(this.leaseMs);
    this.now = options.now ?? Date.now;
  }

  /**
   * Admits the request, or refuses it with the 429 of the first limit already reached (nothing is
   * charged then). `at` places it in its minute, day and month: the request log's `created_at`,
   * so that a quota rebuilt from the log counts it in the same period as the counter did.
   */
  async admit(holders: readonly LimitHolder[], requestId: string, estimatedTokens: number, at: number = this.now()): Promise<AdmissionResult> {
    const now = at;
    const planned = this.plans.of(holders, now).entries;
    if (planned.length === 0) return ADMITTED_WITHOUT_STATE;
    let outcome: ChargeOutcome;
    try {
      const meters = admissionMeters(planned, requestId, estimatedTokens);
      outcome = await this.state.charge(meters);
      if (outcome.missing.length > 0) outcome = await this.state.charge(await this.seeded(planned, meters, outcome.missing));
    } catch (error) {
      // Availability over strictness: a state that cannot be reached does not stop the traffic.
      this.reportError(error);
      return ADMITTED_WITHOUT_STATE;
    }
    const headers = rateLimitHeaders(planned, outcome.values, now);
    const refusedBy = planned[outcome.refused];
    if (refusedBy !== undefined) return { admission: null, refusal: refusal(refusedBy, now), headers };
    return { admission: { planned, requestId, reservedTokens: estimatedTokens }, refusal: null, headers };
  }

  /** The request ended: what it used replaces what it reserved, and its slot is given back. */
  settle(admission: Admission, usedTokens: number, costUsd: number): void {
    if (admission.planned.length === 0) return;
    const meters = settlementMeters(admission.planned, admission.requestId, admission.reservedTokens, usedTokens, costUsd);
    if (meters.length === 0) return;
    for (const meter of meters) this.pending.push(meter);
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    this.flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.flush());
  }

  /** What each limit of these holders has counted so far, as `holder key → limit → value` (0 for a counter the state does not have). */
  async read(holders: readonly LimitHolder[]): Promise<Record<string, Partial<Record<PlannedMeter['name'], number>>>> {
    const planned = planMinute(holders, this.now(), this.leaseMs).entries;
    const outcome = await this.state.charge(planned.map((entry) => ({ key: entry.key, amount: 0, limit: null, ttlMs: entry.ttlMs, slot: entry.quantity === 'slots' ? 'read' : undefined })));
    const counted: Record<string, Partial<Record<PlannedMeter['name'], number>>> = {};
    planned.forEach((entry, index) => {
      (counted[entry.holder.key] ??= {})[entry.name] = outcome.values[index] ?? 0;
    });
    return counted;
  }

  /** Waits for the settlements queued so far (shutdown, tests). */
  async drain(): Promise<void> {
    while (this.flushing !== null) await this.flushing;
  }

  private async flush(): Promise<void> {
    const meters = this.pending;
    this.pending = [];
    try {
      await this.state.charge(meters);
    } catch (error) {
      this.reportError(error);
    } finally {
      this.flushing = null;
      // Settled while this charge was on its way: they go in the next one.
      if (this.pending.length > 0) this.scheduleFlush();
    }
  }

  /** At most one report every ERROR_REPORT_INTERVAL_MS: an outage fails every request, not every line of the log. */
  private reportError(error: unknown): void {
    const now = this.now();
    if (now - this.lastErrorReport < ERROR_REPORT_INTERVAL_MS) return;
    this.lastErrorReport = now;
    this.onError(error);
  }

  /** The admission's meters with a seed for each quota counter the state lacked, read from the ledger. */
  private async seeded(planned: readonly PlannedMeter[], admission: readonly Meter[], missing: readonly number[]): Promise<Meter[]> {
    const spending = new Map<string, Promise<Spending>>();
    const meters = [...admission];
    await Promise.all(
      missing.map(async (index) => {
        const entry = planned[index] as PlannedMeter;
        const periodEnd = entry.periodEnd ?? this.now() + 1;
        const key = `${entry.holder.key}|${entry.periodStart}|${periodEnd}`;
        let spent = spending.get(key);
        if (spent === undefined) spending.set(key, (spent = this.ledger(entry.holder.match, entry.periodStart, periodEnd)));
        const { tokens, usd } = await spent;
        const usesDollars = entry.name === 'usdPerDay' || entry.name === 'usdPerMonth';
        meters[index] = { ...(admission[index] as Meter), seed: usesDollars ? usd : tokens };
      }),
    );
    return meters;
  }
}
