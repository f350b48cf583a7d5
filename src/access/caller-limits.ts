import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
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
  readonly reservedTokens: number;
  /** Who holds its slots in the state: this process, under the name it had when the request was admitted. */
  readonly owner: string;
  /** The keys of the slot sets where its slot is one of a room's (slot-rooms.ts); on the others it holds a slot of its own. */
  readonly roomSlots: readonly string[] | null;
}

/** The slots this process holds on one set for requests in flight (not a room's), under one name. */
interface Holding {
  readonly key: string;
  readonly group: string;
  readonly ttlMs: number;
  readonly owner: string;
  slots: number;
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
   * This process's slots among the requests in flight are a lease of this long, renewed every
   * third of it while it holds any: what a crashed process held is free at most this long after.
   */
  slotLeaseMs?: number;
  /** Names this process as the owner of its slots in the state (default: host, process id and a random part). */
  owner?: string;
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
/** Slot sets renewed per charge: one round trip per this many sets held. */
const RENEWALS_PER_CHARGE = 1_000;
const ADMITTED_WITHOUT_STATE: AdmissionResult = {
  admission: { planned: [], reservedTokens: 0, owner: '', roomSlots: null },
  refusal: null,
  headers: [],
};

/**
 * The caller's rate limits and quotas (token, project and team; the strictest applies). A request
 * is admitted by one atomic `charge` of every meter of every holder (one round trip with Redis),
 * refused with the first limit already reached, and settled when its usage is known. Settlements
 * of requests that end together go to the state in one charge; one that fails is retried with
 * backoff until it lands. The state counts slots by owner: this process holds its slots under one
 * lease per set, which one heartbeat renews while it holds any. After a charge that failed, the
 * state may have applied it or not, and the process's lease may end before the state answers
 * again, so the process takes a new name: what it held under the old one is given back to the old
 * one (harmless once that lease has ended, since nothing takes slots under an old name again).
 * Quota counters the state does not have (a fresh process, a Redis that lost them) are rebuilt
 * from the request log before counting; while the state has them, they alone are trusted.
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
  /** What this process is called in the state, as `${ownerBase}.${generation}`: renamed after a charge that failed. */
  private readonly ownerBase: string;
  private generation = 0;
  private owner: string;
  /** The slots requests in flight hold on their own (not a room's), by set and owner: the heartbeat renews their leases. */
  private readonly holdings = new Map<string, Holding>();
  private readonly heartbeat: NodeJS.Timeout;
  private renewing = false;
  /** Settlements that failed, until they land: adjustments summed by counter, and by slot set and owner. */
  private readonly unsettledCounts = new Map<string, Meter>();
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
    this.ownerBase = options.owner ?? `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`;
    this.owner = `${this.ownerBase}.0`;
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
  async admit(holders: readonly LimitHolder[], estimatedTokens: number, at: number = this.now()): Promise<AdmissionResult> {
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
    const owner = this.owner;
    /** The keys of the slot sets whose slot came from a room. */
    let roomSlots: string[] | null = null;
    for (let index = 0; index < planned.length; index++) {
      const entry = planned[index] as PlannedMeter;
      const { quantity } = entry;
      const amount = admissionAmount(quantity, estimatedTokens);
      let room: number | undefined;
      if (quantity === 'slots') {
        if (this.slotRooms.take(entry.key, now)) {
          (roomSlots ??= []).push(entry.key);
          continue;
        }
        room = this.slotRooms.want(entry, owner, now);
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
        group: entry.group,
        amount,
        limit: entry.limit,
        ttlMs: entry.ttlMs,
        owner: quantity === 'slots' ? owner : undefined,
        needsSeed: entry.needsSeed,
        room,
      });
    }
    if (this.pending.length > pendingBefore) this.scheduleFlush();
    const values = new Array<number>(planned.length);
    if (asked === null) {
      for (let index = 0; index < planned.length; index++) values[index] = this.knownLocally(planned[index] as PlannedMeter, 0);
      return this.admitted(plan, estimatedTokens, values, now, owner, roomSlots, null);
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
      this.undoLocal(planned, local, owner, roomSlots, estimatedTokens, now);
      if (askedEntries.some((entry) => entry.quantity === 'slots')) this.rename();
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
        if (entry.quantity === 'slots') {
          const homeless = this.slotRooms.answered(entry, owner, room, tookRoom, value, now);
          if (homeless > 0) {
            this.pending.push({ key: entry.key, group: entry.group, amount: -homeless, limit: null, ttlMs: entry.ttlMs, owner });
            this.scheduleFlush();
          }
        } else this.rooms.answered(entry, room, tookRoom ? (room ?? 0) : 0, value, now);
        values[index] = this.knownLocally(entry, value);
      } else {
        values[index] = value;
      }
    }
    if (local !== null)
      for (let position = 0; position < local.length; position += 2)
        values[local[position] as number] = this.rooms.known((planned[local[position] as number] as PlannedMeter).key, 0);
    if (roomSlots !== null)
      for (let index = 0; index < planned.length; index++) {
        const entry = planned[index] as PlannedMeter;
        if (entry.quantity === 'slots' && roomSlots.includes(entry.key)) values[index] = this.slotRooms.known(entry.key, 0);
      }
    const refusedBy = refused ? askedEntries[outcome.refused] : undefined;
    if (refusedBy === undefined) return this.admitted(plan, estimatedTokens, values, now, owner, roomSlots, askedEntries);
    this.undoLocal(planned, local, owner, roomSlots, estimatedTokens, now);
    this.onRefusal?.(refusedBy.holder.kind, refusedBy.name);
    return { admission: null, refusal: refusal(refusedBy, now), headers: rateLimitHeaders(planned, values, now) };
  }

  /** `charged`: the meters the state counted for it (its own slots among them), or null when none went to the state. */
  private admitted(
    plan: MeterPlan,
    estimatedTokens: number,
    values: readonly number[],
    now: number,
    owner: string,
    roomSlots: readonly string[] | null,
    charged: readonly PlannedMeter[] | null,
  ): AdmissionResult {
    const admission: Admission = { planned: plan.entries, reservedTokens: estimatedTokens, owner, roomSlots };
    if (charged !== null) for (const entry of charged) if (entry.quantity === 'slots') this.hold(entry, owner, 1);
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
    owner: string,
    roomSlots: readonly string[] | null,
    estimatedTokens: number,
    now: number,
  ): void {
    if (local !== null) {
      for (let position = 0; position < local.length; position += 2) {
        const entry = planned[local[position] as number] as PlannedMeter;
        this.rooms.giveBack(entry, admissionAmount(entry.quantity, estimatedTokens), local[position + 1] as number, this.pending);
      }
    }
    if (roomSlots !== null) {
      for (const entry of planned) {
        if (entry.quantity !== 'slots' || !roomSlots.includes(entry.key)) continue;
        if (!this.slotRooms.put(entry.key, owner, now))
          this.pending.push({ key: entry.key, group: entry.group, amount: -1, limit: null, ttlMs: entry.ttlMs, owner });
      }
    }
    if (this.pending.length > 0) this.scheduleFlush();
  }

  /** The request ended: what it used replaces what it reserved, and its slot is given back. */
  settle(admission: Admission, usedTokens: number, costUsd: number): void {
    if (admission.planned.length === 0) return;
    const { owner, roomSlots } = admission;
    const meters = settlementMeters(admission.planned, owner, admission.reservedTokens, usedTokens, costUsd);
    if (meters.length === 0) return;
    const now = this.now();
    const pendingBefore = this.pending.length;
    for (const meter of meters) {
      // A counter this process holds room on is adjusted there (past the room, in the state); a
      // room's slot goes back to its room.
      if (meter.owner === undefined) {
        if (this.rooms.settle(meter.key, meter.amount, now, this.pending)) continue;
      } else if (roomSlots?.includes(meter.key) === true) {
        if (this.slotRooms.put(meter.key, owner, now)) continue;
      } else {
        this.hold(meter, owner, -1);
      }
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
          ? { key: entry.key, group: entry.group, amount: 0, limit: null, ttlMs: entry.ttlMs, owner: this.owner }
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

  /** How many failed settlements wait for their retry (one per counter, and per slot set and owner). */
  get unsettled(): number {
    return this.unsettledCounts.size;
  }

  /**
   * Shutdown: stops the heartbeat and the retries, and tries once more to write the settlements
   * still waiting. What does not land then is left to the lease (slots) and lost (counters).
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
    const retried = this.takeUnsettled();
    const meters = mergedAdjustments(retried.length === 0 ? fresh : [...fresh, ...retried]);
    try {
      if (meters.length > 0) await this.background.charge(meters);
      this.retryDelayMs = RETRY_FIRST_MS;
    } catch (error) {
      this.reportError(error);
      // Kept for the retry until it lands: a release goes to the owner that took the slot, which
      // takes nothing more under that name (renamed below), so once its lease has ended the
      // release changes nothing.
      for (const meter of meters) this.keepUnsettled(meter);
      if (meters.some((meter) => meter.owner === this.owner)) this.rename();
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
   * (the connection dropped under it), it may have run or not: its slot goes back with any room it
   * asked for, and its counters stay (one given back could count less than was ever counted). A
   * slot given back that was never taken leaves its name holding one fewer than its requests in
   * flight, until the next heartbeat names how many it holds.
   */
  private giveBack(meters: readonly Meter[], late: LateOutcome): void {
    let rooms: readonly number[] | null = null;
    if (late.answered) {
      const outcome = late.value as ChargeOutcome;
      if (outcome.refused !== -1 || outcome.missing.length > 0) return;
      rooms = outcome.rooms;
    }
    meters.forEach((meter, index) => {
      if (meter.owner !== undefined) {
        if (meter.amount <= 0) return;
        // The room it took (or may have taken), if any, was never held here: its slots go back too.
        const slots = meter.amount + (rooms === null || rooms.includes(index) ? (meter.room ?? 0) : 0);
        this.pending.push({ key: meter.key, group: meter.group, amount: -slots, limit: null, ttlMs: meter.ttlMs, owner: meter.owner });
        return;
      }
      if (rooms === null) return;
      // The room it took, if it took one, was never held here: it goes back with the amount.
      const amount = meter.amount + (rooms.includes(index) ? (meter.room ?? 0) : 0);
      if (amount !== 0) this.pending.push({ key: meter.key, group: meter.group, amount: -amount, limit: null, ttlMs: meter.ttlMs });
    });
    this.scheduleFlush();
  }

  private keepUnsettled(meter: Meter): void {
    // Adjustments of one counter, or of one owner's slots on a set, add up: what waits is bounded
    // by the meters, not the requests.
    const key = meter.owner === undefined ? meter.key : `${meter.key}\n${meter.owner}`;
    const kept = this.unsettledCounts.get(key);
    this.unsettledCounts.set(key, kept === undefined ? meter : { ...meter, amount: kept.amount + meter.amount });
  }

  /** The settlements waiting for a retry, removed from the wait. */
  private takeUnsettled(): Meter[] {
    if (this.unsettledCounts.size === 0) return [];
    const taken = [...this.unsettledCounts.values()];
    this.unsettledCounts.clear();
    return taken;
  }

  /** Counts a request's own slot (+1) or its release (-1) in what the heartbeat renews. */
  private hold(entry: { key: string; group?: string; ttlMs: number }, owner: string, slots: number): void {
    const key = `${entry.key}\n${owner}`;
    const holding = this.holdings.get(key);
    if (holding === undefined) {
      if (slots > 0) this.holdings.set(key, { key: entry.key, group: entry.group ?? entry.key, ttlMs: entry.ttlMs, owner, slots });
      return;
    }
    holding.slots += slots;
    if (holding.slots <= 0) this.holdings.delete(key);
  }

  /**
   * After a charge that named this process's slots failed: the state may have applied it or not,
   * and this process's lease may end before it answers again, so new slots are taken under a new
   * name. Rooms go back (their free slots to the old name); requests in flight keep their slots
   * under the name they were admitted with, renewed while they live.
   */
  private rename(): void {
    this.generation++;
    this.owner = `${this.ownerBase}.${this.generation}`;
    const pendingBefore = this.pending.length;
    this.slotRooms.release(this.now(), this.pending, true);
    if (this.pending.length > pendingBefore) this.scheduleFlush();
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
   * The heartbeat: this process's lease on every set where it holds slots (for requests in flight,
   * or free in a room) is renewed, in one charge per RENEWALS_PER_CHARGE sets. Each renewal names
   * how many it holds there at least, so that what a state restarted empty lost is taken again.
   */
  private async renew(): Promise<void> {
    if (this.renewing) return;
    this.renewing = true;
    try {
      const renewals = new Map<string, Meter>();
      const renewal = (key: string, group: string, owner: string, ttlMs: number, slots: number) => {
        const name = `${key}\n${owner}`;
        const atLeast = (renewals.get(name)?.atLeast ?? 0) + slots;
        renewals.set(name, { key, group, amount: 0, limit: null, ttlMs, owner, atLeast });
      };
      for (const holding of this.holdings.values()) renewal(holding.key, holding.group, holding.owner, holding.ttlMs, holding.slots);
      this.slotRooms.forEachHeld(renewal);
      const meters = [...renewals.values()];
      const charges: Array<Promise<unknown>> = [];
      for (let start = 0; start < meters.length; start += RENEWALS_PER_CHARGE)
        charges.push(this.background.charge(meters.slice(start, start + RENEWALS_PER_CHARGE)));
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
 * The settlements of one step with each meter named once: the adjustments of a counter add up, and
 * so do the releases of one owner's slots on a set, so the requests of one holder that ended
 * together cost the state one change of each of its meters, not one per request.
 */
function mergedAdjustments(meters: readonly Meter[]): Meter[] {
  const merged: Meter[] = [];
  // A give-back (created if absent) and a settlement (changed only if present) of one key stay apart.
  const settlements = new Map<string, number>();
  const givenBack = new Map<string, number>();
  for (const meter of meters) {
    const positions = meter.ifPresent === true ? settlements : givenBack;
    const key = meter.owner === undefined ? meter.key : `${meter.key}\n${meter.owner}`;
    const position = positions.get(key);
    if (position === undefined) {
      positions.set(key, merged.length);
      merged.push(meter);
      continue;
    }
    const kept = merged[position] as Meter;
    merged[position] = { ...kept, amount: kept.amount + meter.amount, ttlMs: Math.max(kept.ttlMs, meter.ttlMs) };
  }
  return merged;
}
