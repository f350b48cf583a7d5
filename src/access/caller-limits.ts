import { SwapList } from '../core/index.js';
import type { GatewayError } from '../errors/index.js';
import { StateUnavailableError, type ChargeOutcome, type LateOutcome, type Meter, type SharedState } from '../state/index.js';
import type { LimitHolder, SpendMatch } from './limit-holders.js';
import { CounterRooms, ROOM_IDLE_MS } from './counter-rooms.js';
import { SlotRooms } from './slot-rooms.js';
import { MeterPlans, planMinute, settlementMeters, type LimitName, type MeterPlan, type PlannedMeter, type Quantity } from './limit-plan.js';
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
  /** The slot held on each slot meter, by plan index, where it is one of a room's (slot-rooms.ts); else the request id. */
  readonly slotNames: ReadonlyArray<string | undefined> | null;
  /** Its place among the admissions holding slots (-1: none); only CallerLimits writes it. */
  listSlot: number;
}

/** The decision on a request: admitted (and then settled) or refused; either way the headers its response carries (`[name, value, …]`). */
export type AdmissionResult =
  | { readonly admission: Admission; readonly refusal: null; readonly headers: string[] }
  | { readonly admission: null; readonly refusal: GatewayError; readonly headers: string[] };

export interface CallerLimitsOptions {
  /** What admissions ask, on the request's path: within its latency budget (RequestPathState) where there is one. */
  state: SharedState;
  /** What settlements, slot renewals and reads ask, off the request's path (default: `state`). */
  background?: SharedState;
  ledger: SpendLedger;
  /** Told when the state could not be reached (requests are then let through) or a settlement was lost. */
  onError: (error: unknown) => void;
  /** Told of each request refused, by the kind of the holder whose limit refused it and the limit's name (the metrics). */
  onRefusal?: (holderKind: LimitHolder['kind'], limit: LimitName) => void;
  /**
   * A slot among the requests in flight is a lease of this long, renewed every third of it while
   * its request lives: a slot outlives its request (its process crashed, or lost the state as the
   * request ended) by at most this long.
   */
  slotLeaseMs?: number;
  now?: () => number;
}

/** One quota of a holder, as the share of it spent. */
export interface QuotaUse {
  readonly holder: LimitHolder;
  readonly limit: LimitName;
  readonly usedRatio: number;
}

export const DEFAULT_SLOT_LEASE_MS = 30_000;
const ERROR_REPORT_INTERVAL_MS = 10_000;
/** A settlement that failed is tried again after this, doubling up to RETRY_MAX_MS. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 2_000;
/** Slots renewed per charge: one round trip per this many slots held. */
const RENEWALS_PER_CHARGE = 1_000;
const ADMITTED_WITHOUT_STATE: AdmissionResult = {
  admission: { planned: [], requestId: '', reservedTokens: 0, slotNames: null, listSlot: -1 },
  refusal: null,
  headers: [],
};

/**
 * The caller's rate limits and quotas (token, project and team; the strictest applies). A request
 * is admitted by one atomic `charge` of every meter of every holder (one round trip with Redis),
 * refused with the first limit already reached, and settled when its usage is known. Settlements
 * of requests that end together go to the state in one charge; one that fails is retried with
 * backoff until it lands (a slot's release only until its lease would have ended anyway). Slots
 * are short leases that one heartbeat per process renews for every request still in flight. Quota
 * counters the state does not have (a fresh process, a Redis that lost them) are rebuilt from the
 * request log before counting; while the state has them, they alone are trusted.
 */
export class CallerLimits {
  private readonly state: SharedState;
  private readonly background: SharedState;
  private readonly ledger: SpendLedger;
  private readonly onError: (error: unknown) => void;
  private readonly slotLeaseMs: number;
  private readonly plans: MeterPlans;
  private readonly now: () => number;
  private pending: Meter[] = [];
  private flushing: Promise<void> | null = null;
  private lastErrorReport = Number.NEGATIVE_INFINITY;
  /** The requests in flight that hold slots: the heartbeat renews their slots. Not a Map (core/swap-list.ts says why). */
  private readonly held = new SwapList<Admission>();
  private readonly heartbeat: NodeJS.Timeout;
  private renewing = false;
  /** Settlements that failed, until they land: counter adjustments summed by key, and slot releases with the time their lease ends at the latest. */
  private readonly unsettledCounts = new Map<string, Meter>();
  private readonly unsettledReleases = new Map<string, { meter: Meter; until: number }>();
  private retryTimer: NodeJS.Timeout | null = null;
  private retryDelayMs = RETRY_FIRST_MS;
  private closed = false;
  private readonly stopWatching: () => void;
  /** Room taken in advance on request, token and dollar counters far from their limits (counter-rooms.ts). */
  private readonly rooms = new CounterRooms();
  /** Room taken in advance on slot sets far from their limits (slot-rooms.ts). */
  private readonly slotRooms = new SlotRooms();
  private readonly roomRelease: NodeJS.Timeout;
  private readonly onRefusal: CallerLimitsOptions['onRefusal'] | null;

  constructor(options: CallerLimitsOptions) {
    this.state = options.state;
    this.background = options.background ?? options.state;
    this.ledger = options.ledger;
    this.onError = options.onError;
    this.onRefusal = options.onRefusal ?? null;
    this.slotLeaseMs = options.slotLeaseMs ?? DEFAULT_SLOT_LEASE_MS;
    this.plans = new MeterPlans(this.slotLeaseMs);
    this.now = options.now ?? Date.now;
    // One timer for the process, not one per request; a renewal missed (the state away) is caught
    // up by the next two before any lease ends.
    this.heartbeat = setInterval(() => void this.renew(), Math.max(1, Math.floor(this.slotLeaseMs / 3)));
    this.heartbeat.unref();
    this.roomRelease = setInterval(() => this.releaseRooms(false), ROOM_IDLE_MS);
    this.roomRelease.unref();
    // A state that answers again takes the settlements waiting for it at once, not at the next
    // step of the backoff: a slot given back late frees its holder's next request sooner.
    this.stopWatching = this.background.onAvailability((available) => {
      if (!available || this.closed || this.unsettled === 0) return;
      if (this.retryTimer !== null) clearTimeout(this.retryTimer);
      this.retryTimer = null;
      this.retryDelayMs = RETRY_FIRST_MS;
      this.scheduleFlush();
    });
  }

  /**
   * Admits the request, or refuses it with the 429 of the first limit already reached (nothing is
   * charged then). `at` places it in its minute, day and month: the request log's `created_at`,
   * so that a quota rebuilt from the log counts it in the same period as the counter did.
   */
  async admit(holders: readonly LimitHolder[], requestId: string, estimatedTokens: number, at: number = this.now()): Promise<AdmissionResult> {
    const now = at;
    const plan = this.plans.of(holders, now);
    const planned = plan.entries;
    if (planned.length === 0) return ADMITTED_WITHOUT_STATE;
    const pendingBefore = this.pending.length;
    // Counters with room left (requests, tokens, dollars) are counted here; the rest (slots,
    // counters without room) go to the state in one charge, which asks for room where it would help.
    let asked: number[] | null = null;
    let meters: Meter[] = [];
    /** The meters counted from rooms: [plan index, what went past its room, …], to undo them. */
    let local: number[] | null = null;
    /** The slots taken from rooms, by plan index. */
    let slotNames: Array<string | undefined> | null = null;
    for (let index = 0; index < planned.length; index++) {
      const entry = planned[index] as PlannedMeter;
      const { quantity } = entry;
      const amount = admissionAmount(quantity, estimatedTokens);
      let room: number | undefined;
      if (quantity === 'slots') {
        const name = this.slotRooms.take(entry.key, now);
        if (name !== undefined) {
          (slotNames ??= new Array<string | undefined>(planned.length))[index] = name;
          continue;
        }
        room = this.slotRooms.want(entry, now);
      } else {
        const past = this.rooms.take(entry, amount, now, this.pending);
        if (past >= 0) {
          (local ??= []).push(index, past);
          continue;
        }
        room = this.rooms.want(entry, amount, now);
      }
      (asked ??= []).push(index);
      meters.push({
        key: entry.key,
        group: quantity === 'slots' ? undefined : entry.group,
        amount,
        limit: entry.limit,
        ttlMs: entry.ttlMs,
        slot: quantity === 'slots' ? requestId : undefined,
        needsSeed: entry.needsSeed,
        room,
      });
    }
    if (this.pending.length > pendingBefore) this.scheduleFlush();
    const values = new Array<number>(planned.length);
    if (asked === null) {
      for (let index = 0; index < planned.length; index++) values[index] = this.knownLocally(planned[index] as PlannedMeter, 0);
      return this.admitted(plan, requestId, estimatedTokens, values, now, slotNames);
    }
    const askedEntries = asked.map((index) => planned[index] as PlannedMeter);
    let outcome: ChargeOutcome;
    try {
      outcome = await this.state.charge(meters);
      if (outcome.missing.length > 0) outcome = await this.state.charge((meters = await this.seeded(askedEntries, meters, outcome.missing)));
    } catch (error) {
      // Availability over strictness: a state that cannot be reached does not stop the traffic.
      // An admission answered after the request stopped waiting is given back once its fate is known.
      if (error instanceof StateUnavailableError && error.late !== null) {
        const charged = meters;
        void error.late.then((late) => this.giveBack(charged, late));
      }
      this.undoLocal(planned, local, slotNames, estimatedTokens, now);
      this.roomsUnanswered(askedEntries, meters);
      this.reportError(error);
      return ADMITTED_WITHOUT_STATE;
    }
    const refused = outcome.refused !== -1;
    if (refused) this.roomsUnanswered(askedEntries, meters);
    let taken = 0;
    for (let position = 0; position < asked.length; position++) {
      const index = asked[position] as number;
      const entry = planned[index] as PlannedMeter;
      const value = outcome.values[position] ?? 0;
      if (!refused) {
        const room = (meters[position] as Meter).room;
        const tookRoom = outcome.rooms[taken] === position;
        if (tookRoom) taken++;
        if (entry.quantity === 'slots') this.slotRooms.answered(entry, room, requestId, tookRoom, value, now);
        else this.rooms.answered(entry, room, tookRoom ? (room ?? 0) : 0, value, now);
        values[index] = this.knownLocally(entry, value);
      } else {
        values[index] = value;
      }
    }
    if (local !== null)
      for (let position = 0; position < local.length; position += 2)
        values[local[position] as number] = this.rooms.known((planned[local[position] as number] as PlannedMeter).key, 0);
    if (slotNames !== null)
      for (let index = 0; index < planned.length; index++)
        if (slotNames[index] !== undefined) values[index] = this.slotRooms.known((planned[index] as PlannedMeter).key, 0);
    const refusedBy = refused ? askedEntries[outcome.refused] : undefined;
    if (refusedBy === undefined) return this.admitted(plan, requestId, estimatedTokens, values, now, slotNames);
    this.undoLocal(planned, local, slotNames, estimatedTokens, now);
    this.onRefusal?.(refusedBy.holder.kind, refusedBy.name);
    return { admission: null, refusal: refusal(refusedBy, now), headers: rateLimitHeaders(planned, values, now) };
  }

  private admitted(
    plan: MeterPlan,
    requestId: string,
    estimatedTokens: number,
    values: readonly number[],
    now: number,
    slotNames: ReadonlyArray<string | undefined> | null,
  ): AdmissionResult {
    const admission: Admission = { planned: plan.entries, requestId, reservedTokens: estimatedTokens, slotNames, listSlot: -1 };
    if (plan.slots.length > 0) this.held.add(admission);
    return {
      admission,
      refusal: null,
      headers: rateLimitHeaders(plan.entries, values, now),
    };
  }

  private roomsUnanswered(askedEntries: readonly PlannedMeter[], meters: readonly Meter[]): void {
    for (let position = 0; position < meters.length; position++) {
      if ((meters[position] as Meter).room === undefined) continue;
      const entry = askedEntries[position] as PlannedMeter;
      if (entry.quantity === 'slots') this.slotRooms.unanswered(entry.key);
      else this.rooms.unanswered(entry);
    }
  }

  /** A meter's value as this process knows it, with the room it holds unused taken out. */
  private knownLocally(entry: PlannedMeter, value: number): number {
    return entry.quantity === 'slots' ? this.slotRooms.known(entry.key, value) : this.rooms.known(entry.key, value);
  }

  /** What an admission counted from rooms goes back to them: its request was refused, or went on uncounted. */
  private undoLocal(
    planned: readonly PlannedMeter[],
    local: readonly number[] | null,
    slotNames: ReadonlyArray<string | undefined> | null,
    estimatedTokens: number,
    now: number,
  ): void {
    if (local !== null) {
      for (let position = 0; position < local.length; position += 2) {
        const entry = planned[local[position] as number] as PlannedMeter;
        this.rooms.giveBack(entry, admissionAmount(entry.quantity, estimatedTokens), local[position + 1] as number, this.pending);
      }
    }
    if (slotNames !== null) {
      for (let index = 0; index < planned.length; index++) {
        const name = slotNames[index];
        if (name === undefined) continue;
        const entry = planned[index] as PlannedMeter;
        if (!this.slotRooms.put(entry.key, name, now)) this.pending.push({ key: entry.key, amount: -1, limit: null, ttlMs: entry.ttlMs, slot: name });
      }
    }
    if (this.pending.length > 0) this.scheduleFlush();
  }

  /** The request ended: what it used replaces what it reserved, and its slot is given back. */
  settle(admission: Admission, usedTokens: number, costUsd: number): void {
    if (admission.planned.length === 0) return;
    this.held.remove(admission);
    const meters = settlementMeters(admission.planned, admission.requestId, admission.reservedTokens, usedTokens, costUsd, admission.slotNames);
    if (meters.length === 0) return;
    const now = this.now();
    const pendingBefore = this.pending.length;
    for (const meter of meters) {
      // A counter this process holds room on is adjusted there (past the room, in the state); a
      // room's slot goes back to its room.
      if (
        meter.slot === undefined
          ? this.rooms.settle(meter.key, meter.amount, now, this.pending)
          : meter.slot !== admission.requestId && this.slotRooms.put(meter.key, meter.slot, now)
      )
        continue;
      this.pending.push(meter);
    }
    if (this.pending.length > pendingBefore) this.scheduleFlush();
  }

  /** Rooms unused for a while (all of them at shutdown) go back to the state, with the settlements. */
  private releaseRooms(every: boolean): void {
    const pendingBefore = this.pending.length;
    const now = this.now();
    this.rooms.release(now, this.pending, every);
    this.slotRooms.release(now, this.pending, every);
    if (this.pending.length > pendingBefore) this.scheduleFlush();
  }

  private scheduleFlush(): void {
    this.flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.flush());
  }

  /** What each limit of these holders has counted so far, as `holder key → limit → value` (0 for a counter the state does not have). */
  async read(holders: readonly LimitHolder[]): Promise<Record<string, Partial<Record<PlannedMeter['name'], number>>>> {
    const planned = planMinute(holders, this.now(), this.slotLeaseMs).entries;
    const outcome = await this.background.charge(
      planned.map((entry) =>
        entry.quantity === 'slots'
          ? { key: entry.key, amount: 0, limit: null, ttlMs: entry.ttlMs, slot: 'read' }
          : { key: entry.key, group: entry.group, amount: 0, limit: null, ttlMs: entry.ttlMs },
      ),
    );
    const counted: Record<string, Partial<Record<PlannedMeter['name'], number>>> = {};
    planned.forEach((entry, index) => {
      // Room this process holds unused is not spent (other replicas' rooms are: they are not known here).
      const held = entry.quantity === 'slots' ? this.slotRooms.held(entry.key) : this.rooms.held(entry.key);
      (counted[entry.holder.key] ??= {})[entry.name] = (outcome.values[index] ?? 0) - held;
    });
    return counted;
  }

  /**
   * Each quota of these holders as the share of it spent (`used ÷ limit`), read off the request
   * path, `chunk` holders to a round trip. A quota the state lost (a restart with memory state, a
   * Redis flushed) reads 0 until its holder's next request rebuilds it from the request log.
   */
  async quotaUse(holders: readonly LimitHolder[], chunk = 100): Promise<QuotaUse[]> {
    const uses: QuotaUse[] = [];
    for (let start = 0; start < holders.length; start += chunk) {
      const part = holders.slice(start, start + chunk);
      const counted = await this.read(part);
      for (const holder of part)
        for (const name of Object.keys(holder.limits) as LimitName[]) {
          const limit = holder.limits[name];
          if (limit === undefined || limit <= 0) continue;
          uses.push({ holder, limit: name, usedRatio: Math.max(0, counted[holder.key]?.[name] ?? 0) / limit });
        }
    }
    return uses;
  }

  /** Waits for the settlements queued so far (tests); those that failed wait for their retry. */
  async drain(): Promise<void> {
    while (this.flushing !== null) await this.flushing;
  }

  /** How many failed settlements wait for their retry (counters by key, slot releases). */
  get unsettled(): number {
    return this.unsettledCounts.size + this.unsettledReleases.size;
  }

  /**
   * Shutdown: stops the heartbeat and the retries, and tries once more to write the settlements
   * still waiting. What does not land then is left to the leases (slots) and lost (counters).
   */
  async close(): Promise<void> {
    this.closed = true;
    this.stopWatching();
    clearInterval(this.heartbeat);
    clearInterval(this.roomRelease);
    this.releaseRooms(true);
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.unsettled > 0) this.scheduleFlush();
    await this.drain();
  }

  private async flush(): Promise<void> {
    const fresh = this.pending;
    this.pending = [];
    const now = this.now();
    const retried = this.takeUnsettled(now);
    const meters = mergedAdjustments(retried.length === 0 ? fresh : [...fresh, ...retried.map((entry) => entry.meter)]);
    try {
      if (meters.length > 0) await this.background.charge(meters);
      this.retryDelayMs = RETRY_FIRST_MS;
    } catch (error) {
      this.reportError(error);
      // Kept for the retry: a slot's release until its lease ends anyway, at most slotLeaseMs from
      // now (its last renewal was before its request ended); a counter's adjustment until it lands.
      for (const meter of fresh) this.keepUnsettled(meter, now + this.slotLeaseMs);
      for (const entry of retried) this.keepUnsettled(entry.meter, entry.until);
      this.scheduleRetry();
    } finally {
      this.flushing = null;
      // Settled while this charge was on its way: they go in the next one.
      if (this.pending.length > 0) this.scheduleFlush();
    }
  }

  /**
   * An admission its request stopped waiting for (the state's budget passed): the request went on
   * uncounted, so what the charge took goes back, through the settlements (retried until they
   * land). Answered, it is known to have run: counters by their amount, and the slot. Failed late
   * (the connection dropped under it), it may have run or not: only the slot goes back, harmless if
   * it was never taken, where a counter given back could count less than was ever counted.
   */
  private giveBack(meters: readonly Meter[], late: LateOutcome): void {
    let rooms: readonly number[] = [];
    if (late.answered) {
      const outcome = late.value as ChargeOutcome;
      if (outcome.refused !== -1 || outcome.missing.length > 0) return;
      rooms = outcome.rooms;
    }
    meters.forEach((meter, index) => {
      if (meter.slot !== undefined) {
        if (meter.amount <= 0) return;
        this.pending.push({ key: meter.key, amount: -1, limit: null, ttlMs: meter.ttlMs, slot: meter.slot });
        // The room it took, if it took one, was never held here: its slots go back too.
        if (rooms.includes(index))
          for (let member = 1; member <= (meter.room ?? 0); member++)
            this.pending.push({ key: meter.key, amount: -1, limit: null, ttlMs: meter.ttlMs, slot: `${meter.slot}#${member}` });
        return;
      }
      // The room it took, if it took one, was never held here: it goes back with the amount.
      const amount = meter.amount + (rooms.includes(index) ? (meter.room ?? 0) : 0);
      if (late.answered && amount !== 0) this.pending.push({ key: meter.key, group: meter.group, amount: -amount, limit: null, ttlMs: meter.ttlMs });
    });
    this.scheduleFlush();
  }

  private keepUnsettled(meter: Meter, until: number): void {
    if (meter.slot !== undefined) {
      this.unsettledReleases.set(`${meter.key}\n${meter.slot}`, { meter, until });
      return;
    }
    // Adjustments of one counter add up: what waits is bounded by the counters, not the requests.
    const kept = this.unsettledCounts.get(meter.key);
    this.unsettledCounts.set(meter.key, kept === undefined ? meter : { ...meter, amount: kept.amount + meter.amount });
  }

  /** The settlements waiting for a retry, removed from the wait; releases whose lease has ended are dropped. */
  private takeUnsettled(now: number): Array<{ meter: Meter; until: number }> {
    if (this.unsettledCounts.size === 0 && this.unsettledReleases.size === 0) return [];
    const taken: Array<{ meter: Meter; until: number }> = [];
    for (const meter of this.unsettledCounts.values()) taken.push({ meter, until: Number.POSITIVE_INFINITY });
    for (const release of this.unsettledReleases.values()) if (release.until > now) taken.push(release);
    this.unsettledCounts.clear();
    this.unsettledReleases.clear();
    return taken;
  }

  private scheduleRetry(): void {
    if (this.closed || this.retryTimer !== null) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.scheduleFlush();
    }, this.retryDelayMs);
    this.retryTimer.unref();
    this.retryDelayMs = Math.min(RETRY_MAX_MS, this.retryDelayMs * 2);
  }

  /**
   * The heartbeat: every slot of every request in flight in this process gets a fresh lease, in
   * one charge per RENEWALS_PER_CHARGE slots. The charges are all sent before anything else can
   * run, so a release queued after this point reaches the state after them (one connection keeps
   * the order) and a slot is never renewed after it was given back.
   */
  private async renew(): Promise<void> {
    if (this.renewing) return;
    this.renewing = true;
    try {
      const charges: Array<Promise<unknown>> = [];
      let batch: Meter[] = [];
      const renewal = (key: string, slot: string) => {
        batch.push({ key, amount: 1, limit: null, ttlMs: this.slotLeaseMs, slot });
        if (batch.length === RENEWALS_PER_CHARGE) {
          charges.push(this.background.charge(batch));
          batch = [];
        }
      };
      for (const { planned, requestId, slotNames } of this.held.values())
        for (let index = 0; index < planned.length; index++) {
          const entry = planned[index] as PlannedMeter;
          if (entry.quantity === 'slots') renewal(entry.key, slotNames?.[index] ?? requestId);
        }
      // The free slots of rooms are this process's too, until they go back.
      this.slotRooms.forEachFree(renewal);
      if (batch.length > 0) charges.push(this.background.charge(batch));
      await Promise.all(charges);
    } catch (error) {
      this.reportError(error);
    } finally {
      this.renewing = false;
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

/** What an admission counts on a meter: one request, its reserved tokens, no dollars yet (they are known at settlement), one slot. */
function admissionAmount(quantity: Quantity, estimatedTokens: number): number {
  return quantity === 'tokens' ? estimatedTokens : quantity === 'usd' ? 0 : 1;
}

/**
 * The settlements of one step with each counter named once: the adjustments of a counter add up,
 * so the requests of one holder that ended together cost the state one change of each of its
 * counters, not one per request (every meter is a read and a write in the state's script). Slots
 * stay one meter each: each names its own.
 */
function mergedAdjustments(meters: readonly Meter[]): Meter[] {
  const merged: Meter[] = [];
  // A give-back (created if absent) and a settlement (changed only if present) of one key stay apart.
  const settlements = new Map<string, number>();
  const givenBack = new Map<string, number>();
  for (const meter of meters) {
    if (meter.slot !== undefined) {
      merged.push(meter);
      continue;
    }
    const positions = meter.ifPresent === true ? settlements : givenBack;
    const position = positions.get(meter.key);
    if (position === undefined) {
      positions.set(meter.key, merged.length);
      merged.push(meter);
      continue;
    }
    const kept = merged[position] as Meter;
    merged[position] = { ...kept, amount: kept.amount + meter.amount, ttlMs: Math.max(kept.ttlMs, meter.ttlMs) };
  }
  return merged;
}
