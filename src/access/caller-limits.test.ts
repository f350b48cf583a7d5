import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryState, StateUnavailableError, type ChargeOutcome, type LateOutcome, type Meter } from '../state/index.js';
import type { Limits } from '../store/index.js';
import { CallerLimits, type Admission, type AdmissionResult, type Spending } from './caller-limits.js';
import type { LimitHolder, SpendMatch } from './limit-holders.js';

// 2026-11-24T23:59:00.000Z: a minute before a UTC day ends.
const START = Date.UTC(2026, 10, 24, 23, 59, 0);
const LEASE_MS = 3_000;

/** A memory state whose `charge` fails while `down`: a Redis the process cannot reach. */
class FlakyState extends MemoryState {
  down = false;
  /**
   * Set: a charge runs, but its caller has stopped waiting (a RequestPathState's budget passed) and
   * learns later what became of it: answered, or its reply lost.
   */
  late: 'answered' | 'lost' | null = null;
  override async charge(meters: readonly Meter[]): Promise<ChargeOutcome> {
    if (this.down) throw new Error('state unreachable');
    if (this.late === null) return super.charge(meters);
    const lost = this.late === 'lost';
    const outcome = super.charge(meters).then((value): LateOutcome => (lost ? { answered: false } : { answered: true, value }));
    throw new StateUnavailableError('the shared state did not answer within 150 ms', false, outcome);
  }
}

function holder(kind: LimitHolder['kind'], id: string, limits: Limits): LimitHolder {
  return { kind, key: `${kind}:${id}`, label: `${kind} ${id}`, match: kind === 'token' ? { tokenId: id } : { team: id }, limits };
}

describe('CallerLimits', () => {
  let time: number;
  let state: FlakyState;
  let ledgerCalls: Array<{ match: SpendMatch; fromMs: number; toMs: number }>;
  let recorded: Spending;
  let errors: unknown[];
  let limits: CallerLimits;

  const open = (): CallerLimits =>
    new CallerLimits({
      state,
      slotLeaseMs: LEASE_MS,
      now: () => time,
      ledger: async (match, fromMs, toMs) => {
        ledgerCalls.push({ match, fromMs, toMs });
        return recorded;
      },
      onError: (error) => errors.push(error),
    });

  beforeEach(() => {
    time = START;
    state = new FlakyState({ now: () => time });
    ledgerCalls = [];
    recorded = { tokens: 0, usd: 0 };
    errors = [];
    limits = open();
  });
  afterEach(async () => {
    await limits.close();
    await state.close();
    vi.useRealTimers();
  });

  /** The decision, with its headers as an object to read them by name. */
  const admit = async (holders: LimitHolder[], estimate = 0): Promise<Omit<AdmissionResult, 'headers'> & { headers: Record<string, string> }> => {
    const result = await limits.admit(holders, estimate);
    const headers: Record<string, string> = {};
    for (let index = 0; index < result.headers.length; index += 2) headers[result.headers[index] as string] = result.headers[index + 1] as string;
    return { ...result, headers };
  };
  const admitted = async (holders: LimitHolder[], estimate = 0): Promise<Admission> => {
    const result = await admit(holders, estimate);
    expect(result.refusal).toBeNull();
    return result.admission as Admission;
  };
  const settle = async (admission: Admission, tokens: number, usd = 0): Promise<void> => {
    limits.settle(admission, tokens, usd);
    await limits.drain();
  };

  it('requests per minute: N pass with the headers counting down, N+1 is refused until the minute ends', async () => {
    const team = holder('team', 'search', { rpm: 3 });
    time = START + 20_000;
    for (const remaining of ['2', '1', '0']) {
      const result = await admit([team]);
      expect(result.headers).toEqual({ 'x-ratelimit-limit-requests': '3', 'x-ratelimit-remaining-requests': remaining, 'x-ratelimit-reset-requests': '40s' });
    }
    const refused = await admit([team]);
    expect(refused.refusal).toMatchObject({ code: 'rate_limit_exceeded', status: 429, retryAfterSeconds: 40 });
    expect(refused.refusal?.message).toBe('Rate limit reached: 3 requests per minute for team search. Try again in 40 s.');
    expect(refused.headers['x-ratelimit-remaining-requests']).toBe('0');
    time = START + 59_999;
    expect((await admit([team])).refusal).not.toBeNull();
    time = START + 60_000;
    expect((await admit([team])).headers['x-ratelimit-remaining-requests']).toBe('2');
  });

  it('the strictest holder refuses, is named, and nothing is counted against the others', async () => {
    const token = holder('token', 'tok_1', { rpm: 5 });
    const team = holder('team', 'search', { rpm: 2 });
    await admitted([token, team]);
    const second = await admit([token, team]);
    // The header shows the tightest limit in force: the team's.
    expect(second.headers).toMatchObject({ 'x-ratelimit-limit-requests': '2', 'x-ratelimit-remaining-requests': '0' });
    const refused = await admit([token, team]);
    expect(refused.refusal?.message).toContain('for team search');
    // The token alone has used 2 of its 5.
    expect((await admit([token])).headers['x-ratelimit-remaining-requests']).toBe('2');
  });

  it('requests in flight: a slot frees when a request is settled', async () => {
    const token = holder('token', 'tok_1', { maxConcurrent: 2 });
    const first = await admitted([token]);
    await admitted([token]);
    const refused = await admit([token]);
    expect(refused.refusal).toMatchObject({ code: 'rate_limit_exceeded', retryAfterSeconds: 1 });
    expect(refused.refusal?.message).toBe('Rate limit reached: 2 requests in flight for token tok_1. Try again when one of them ends.');
    await settle(first, 0);
    await admitted([token]);
    expect((await admit([token])).refusal).not.toBeNull();
  });

  it('requests of one holder that end together are settled in one charge that names each counter and slot set once', async () => {
    // Limits too close for room (counter-rooms.ts): every token counter is charged in the state.
    const token = holder('token', 'tok_1', { tpm: 1_000, maxConcurrent: 5, tokensPerDay: 1_000 });
    const first = await admitted([token], 10);
    const second = await admitted([token], 10);
    const charges: Meter[][] = [];
    const charge = state.charge.bind(state);
    state.charge = (meters) => {
      charges.push([...meters]);
      return charge(meters);
    };
    limits.settle(first, 30, 0);
    limits.settle(second, 50, 0);
    await limits.drain();
    expect(charges).toHaveLength(1);
    const sent = charges[0] as Meter[];
    const counters = sent.filter((meter) => meter.owner === undefined);
    expect(counters.map((meter) => meter.key).sort()).toEqual([`token:tok_1:tokens:day:${Date.UTC(2026, 10, 24)}`, `token:tok_1:tpm:${START}`]);
    // Reserved 10 + 10, used 30 + 50: one adjustment of 60 each.
    expect(counters.map((meter) => meter.amount)).toEqual([60, 60]);
    // Both slots go back in one release.
    expect(sent.filter((meter) => meter.owner !== undefined).map((meter) => [meter.key, meter.amount])).toEqual([['token:tok_1:in-flight', -2]]);
    const next = await admit([token], 0);
    expect(next.headers).toMatchObject({ 'x-ratelimit-remaining-tokens': '920' });
  });

  describe('room taken in advance on request, token and dollar counters', () => {
    const NEVER = 1_000_000_000;
    const dayKey = (id: string): string => `token:${id}:tokens:day:${Date.UTC(2026, 10, 24)}`;
    /** The counter as the state holds it, rooms included. */
    const inState = async (key: string): Promise<number> =>
      (await state.charge([{ key, group: key.split(':').slice(0, 2).join(':'), amount: 0, limit: null, ttlMs: 60_000 }])).values[0] as number;
    /** A slot set's size as the state holds it, rooms included. */
    const inFlight = async (key: string): Promise<number> =>
      (await state.charge([{ key, group: key.split(':').slice(0, 2).join(':'), amount: 0, limit: null, ttlMs: 60_000, owner: 'read' }])).values[0] as number;
    const recordCharges = (): Meter[][] => {
      const charges: Meter[][] = [];
      const charge = state.charge.bind(state);
      state.charge = (meters) => {
        charges.push([...meters]);
        return charge(meters);
      };
      return charges;
    };

    it('far from every limit, the state is not asked at all; what was spent is exact once the rooms go back', async () => {
      const token = holder('token', 'tok_1', { rpm: NEVER, tpm: NEVER, maxConcurrent: NEVER, tokensPerDay: NEVER, usdPerDay: NEVER });
      // A first room covers four requests like the first; the next ones are a second of what was
      // spent since (time stands still here: a tenth of a second at least). The first request's
      // cost sizes the dollar room: until one is known, a dollar counter has none.
      let spent = 0;
      for (let index = 0; index < 8; index++) {
        await settle(await admitted([token], 100), 100 + index, 0.5);
        spent += 100 + index;
      }
      const charges = recordCharges();
      for (let index = 0; index < 10; index++) {
        await settle(await admitted([token], 100), 80 + index, 0.03125);
        spent += 80 + index;
      }
      // Requests, slots and the settlements' adjustments were all counted in the rooms.
      expect(charges).toEqual([]);
      expect(await limits.read([token])).toMatchObject({ [token.key]: { tokensPerDay: spent, tpm: spent, usdPerDay: 4.3125, rpm: 18 } });
      expect(await inState(dayKey('tok_1'))).toBeGreaterThan(spent);
      await limits.close();
      expect(await inState(dayKey('tok_1'))).toBe(spent);
      expect(await inState(`token:tok_1:usd:day:${Date.UTC(2026, 10, 24)}`)).toBe(4.3125);
      expect(await inState(`token:tok_1:rpm:${Math.floor(time / 60_000) * 60_000}`)).toBe(18);
      expect(await inFlight('token:tok_1:in-flight')).toBe(0);
    });

    it("slots far from their limit come from a room that grows with the process's requests in flight; in flight reads exact", async () => {
      const token = holder('token', 'tok_1', { maxConcurrent: NEVER });
      const key = 'token:tok_1:in-flight';
      const charges = recordCharges();
      // The first takes its own slot and asks for a room of four.
      const admissions = () => charges.filter((meters) => meters.some((meter) => meter.amount === 1));
      // The first takes its slot alone (a holder seen once asks for no room); the second asks for four.
      const first = await admitted([token]);
      const second = await admitted([token]);
      expect(admissions().map((meters) => meters.map((meter) => meter.room))).toEqual([[undefined], [4]]);
      expect(await inFlight(key)).toBe(6);
      const fromRoom: Admission[] = [];
      for (let index = 0; index < 4; index++) fromRoom.push(await admitted([token]));
      expect(admissions()).toHaveLength(2);
      expect(await limits.read([token])).toMatchObject({ [token.key]: { maxConcurrent: 6 } });
      // The room is used up: the next asks for as many as are in use from it.
      const seventh = await admitted([token]);
      expect(admissions().map((meters) => meters.map((meter) => meter.room))).toEqual([[undefined], [4], [4]]);
      expect(await inFlight(key)).toBe(11);
      for (const admission of [first, second, ...fromRoom, seventh]) await settle(admission, 0);
      expect(await limits.read([token])).toMatchObject({ [token.key]: { maxConcurrent: 0 } });
      // The askers' own slots went back to the state; the rooms' stay with the process, free.
      expect(await inFlight(key)).toBe(8);
      await limits.close();
      expect(await inFlight(key)).toBe(0);
    });

    it('near its limit every slot is taken in the state, one by one: exactly the limit in flight', async () => {
      const token = holder('token', 'tok_1', { maxConcurrent: 40 });
      const charges = recordCharges();
      const outcomes = await Promise.all(Array.from({ length: 41 }, () => admit([token])));
      expect(outcomes.filter((outcome) => outcome.refusal === null)).toHaveLength(40);
      expect(charges.flat().filter((meter) => meter.room !== undefined)).toEqual([]);
      expect(await inFlight('token:tok_1:in-flight')).toBe(40);
    });

    it("a room's free slots are renewed by the heartbeat while it is used, and go back after a second unused", async () => {
      vi.useFakeTimers({ toFake: ['setInterval', 'setTimeout'] });
      await limits.close();
      limits = open();
      const token = holder('token', 'tok_1', { maxConcurrent: NEVER });
      const key = 'token:tok_1:in-flight';
      const first = await admitted([token]);
      await settle(await admitted([token]), 0);
      expect(await inFlight(key)).toBe(5);
      // Past the room's first lease, its slots used now and then: still held, free ones included.
      for (let step = 0; step < 8; step++) {
        await settle(await admitted([token]), 0);
        time += LEASE_MS / 6;
        await vi.advanceTimersByTimeAsync(LEASE_MS / 6);
      }
      expect(await inFlight(key)).toBe(5);
      await settle(first, 0);
      time += 1_000;
      await vi.advanceTimersByTimeAsync(1_000);
      await limits.drain();
      expect(await inFlight(key)).toBe(0);
    });

    it('a request that took a room slot and was refused by another meter puts the slot back', async () => {
      const token = holder('token', 'tok_1', { maxConcurrent: NEVER });
      const team = holder('team', 'search', { rpm: 3 });
      await admitted([token, team]);
      await admitted([token, team]);
      await admitted([token, team]);
      expect((await admit([token, team])).refusal).toMatchObject({ code: 'rate_limit_exceeded' });
      expect(await limits.read([token])).toMatchObject({ [token.key]: { maxConcurrent: 3 } });
      await limits.close();
      // The three admitted are still in flight (never settled): two slots of their own and a room's
      // slot the third holds. The refused one's went back to the room, and with its free slots to the state.
      expect(await inFlight('token:tok_1:in-flight')).toBe(3);
    });

    it('a request counted in its rpm room and refused by its slot gives the request back', async () => {
      const token = holder('token', 'tok_1', { rpm: NEVER, maxConcurrent: 1 });
      const first = await admitted([token], 100);
      const rpmKey = `token:tok_1:rpm:${Math.floor(time / 60_000) * 60_000}`;
      // The first admission took room on rpm: the state's counter holds it.
      expect(await inState(rpmKey)).toBeGreaterThan(1);
      const charges = recordCharges();
      const second = await limits.admit([token], 100);
      expect(second.refusal?.code).toBe('rate_limit_exceeded');
      expect(charges.flat().map((meter) => meter.key.split(':')[2])).toEqual(['in-flight']);
      await settle(first, 100, 0);
      expect(await limits.read([token])).toMatchObject({ [token.key]: { rpm: 1 } });
      await limits.close();
      expect(await inState(rpmKey)).toBe(1);
    });

    it('admissions in flight together ask for one room, not one each', async () => {
      const token = holder('token', 'tok_1', { tpm: NEVER });
      const charges = recordCharges();
      await Promise.all(Array.from({ length: 10 }, () => admitted([token], 100)));
      expect(charges).toHaveLength(10);
      expect(charges.flat().filter((meter) => meter.room !== undefined)).toHaveLength(1);
      // The next one counts in the room it took.
      await admitted([token], 100);
      expect(charges).toHaveLength(10);
    });

    it('a room unused for a second goes back to the state', async () => {
      vi.useFakeTimers({ toFake: ['setInterval', 'setTimeout'] });
      await limits.close();
      limits = open();
      const token = holder('token', 'tok_1', { tokensPerDay: NEVER });
      await settle(await admitted([token], 100), 100);
      expect(await inState(dayKey('tok_1'))).toBe(100 + 4 * 100);
      time += 1_000;
      await vi.advanceTimersByTimeAsync(1_000);
      await limits.drain();
      expect(await inState(dayKey('tok_1'))).toBe(100);
    });

    it('a request refused by another meter gives back what it counted in the rooms', async () => {
      const token = holder('token', 'tok_1', { rpm: 2, tokensPerDay: NEVER });
      await admitted([token], 100);
      await admitted([token], 100);
      expect((await admit([token], 100)).refusal).toMatchObject({ code: 'rate_limit_exceeded' });
      expect(await limits.read([token])).toMatchObject({ [token.key]: { tokensPerDay: 200 } });
    });

    it('replicas sharing a state together admit exactly a quota: near it, every request is counted in the state', async () => {
      const other = open();
      try {
        const token = holder('token', 'tok_1', { tokensPerDay: 20_000 });
        const admittedBy = [0, 0];
        const refusedBy = [false, false];
        for (let index = 0; !(refusedBy[0] && refusedBy[1]); index++) {
          const side = index % 2;
          const result = await (side === 0 ? limits : other).admit([token], 10);
          if (result.admission === null) {
            refusedBy[side] = true;
            continue;
          }
          admittedBy[side] = (admittedBy[side] as number) + 1;
          (side === 0 ? limits : other).settle(result.admission, 10, 0);
          await limits.drain();
          await other.drain();
        }
        // Room was taken while far from the quota; none of it was lost to the other replica's refusals.
        expect((admittedBy[0] as number) + (admittedBy[1] as number)).toBe(2_000);
        expect(admittedBy[0]).toBeGreaterThan(0);
        expect(admittedBy[1]).toBeGreaterThan(0);
      } finally {
        await other.close();
      }
    });
  });

  it('tokens per minute: the estimate is reserved, then replaced by the usage', async () => {
    const token = holder('token', 'tok_1', { tpm: 100 });
    const first = await admit([token], 10);
    expect(first.headers).toMatchObject({ 'x-ratelimit-limit-tokens': '100', 'x-ratelimit-remaining-tokens': '90' });
    await settle(first.admission as Admission, 60);
    const second = await admit([token], 10);
    expect(second.headers['x-ratelimit-remaining-tokens']).toBe('30');
    await settle(second.admission as Admission, 60);
    const refused = await admit([token], 10);
    expect(refused.refusal).toMatchObject({ code: 'rate_limit_exceeded' });
    expect(refused.refusal?.message).toContain('100 tokens per minute for token tok_1');
    expect(refused.headers['x-ratelimit-remaining-tokens']).toBe('0');
  });

  it('a day quota is rebuilt from the ledger, refuses with the reset time, and a new UTC day starts from the ledger again', async () => {
    const team = holder('team', 'search', { tokensPerDay: 1000 });
    recorded = { tokens: 950, usd: 0 };
    const first = await admitted([team], 10);
    expect(ledgerCalls).toEqual([{ match: { team: 'search' }, fromMs: Date.UTC(2026, 10, 24), toMs: Date.UTC(2026, 10, 25) }]);
    await settle(first, 100);
    const refused = await admit([team], 10);
    expect(refused.refusal).toMatchObject({ code: 'quota_exceeded', status: 429, retryAfterSeconds: 60 });
    expect(refused.refusal?.message).toBe('Quota exceeded: 1000 tokens per day (UTC) for team search. It resets at 2026-11-25T00:00:00.000Z.');
    // Counted from the state now: the ledger is not read again.
    expect(ledgerCalls).toHaveLength(1);
    time = Date.UTC(2026, 10, 25);
    recorded = { tokens: 0, usd: 0 };
    await admitted([team], 10);
    expect(ledgerCalls[1]).toEqual({ match: { team: 'search' }, fromMs: Date.UTC(2026, 10, 25), toMs: Date.UTC(2026, 10, 26) });
  });

  it('a month quota in dollars is charged the cost; a total quota says it never resets', async () => {
    const token = holder('token', 'tok_1', { usdPerMonth: 1, tokensTotal: 500 });
    await settle(await admitted([token]), 100, 0.6);
    await settle(await admitted([token]), 100, 0.6);
    const refused = await admit([token]);
    expect(refused.refusal?.message).toBe('Quota exceeded: $1 per month (UTC) for token tok_1. It resets at 2026-12-01T00:00:00.000Z.');
    const totals = holder('token', 'tok_2', { tokensTotal: 150 });
    await settle(await admitted([totals]), 200);
    const never = await admit([totals]);
    expect(never.refusal).toMatchObject({ code: 'quota_exceeded', retryAfterSeconds: 86_400 });
    expect(never.refusal?.message).toBe('Quota exceeded: 150 tokens in all for token tok_2. This quota never resets; an operator can raise it.');
  });

  it('a state that lost its counters rebuilds quotas from the ledger; rate windows start over', async () => {
    const team = holder('team', 'search', { tokensPerMonth: 1000, rpm: 1 });
    await settle(await admitted([team]), 400);
    await state.close();
    state = new FlakyState({ now: () => time });
    await limits.close();
    limits = open();
    // What the request log holds: the 400 tokens spent.
    recorded = { tokens: 400, usd: 0 };
    await settle(await admitted([team]), 700);
    time += 60_000;
    expect((await admit([team])).refusal).toMatchObject({ code: 'quota_exceeded' });
  });

  it('lets requests through when the state cannot be reached, and says so', async () => {
    const team = holder('team', 'search', { rpm: 1 });
    await state.close();
    expect(await admit([team])).toMatchObject({ refusal: null, headers: {} });
    expect(await admit([team])).toMatchObject({ refusal: null });
    // One report, not one per request.
    expect(errors).toHaveLength(1);
  });

  it('an admission answered after the request stopped waiting is given back: its counts and its slot', async () => {
    const team = holder('team', 'search', { rpm: 5, maxConcurrent: 1 });
    state.late = 'answered';
    expect(await admit([team])).toMatchObject({ refusal: null, admission: { planned: [] } });
    state.late = null;
    // Once the late reply is in and the give-back settled, nothing of it is held or counted.
    await new Promise((resolve) => setImmediate(resolve));
    await limits.drain();
    expect(await limits.read([team])).toEqual({ [team.key]: { rpm: 0, maxConcurrent: 0 } });
  });

  it('an admission whose late reply was lost gives back only its slot (it may have run or not)', async () => {
    const team = holder('team', 'search', { rpm: 5, maxConcurrent: 1 });
    state.late = 'lost';
    await admit([team]);
    state.late = null;
    await new Promise((resolve) => setImmediate(resolve));
    await limits.drain();
    expect(await limits.read([team])).toEqual({ [team.key]: { rpm: 1, maxConcurrent: 0 } });
  });

  it('a slot given back after a lost reply that was never taken is held again by the next heartbeat for the requests still in flight', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'setTimeout'] });
    await limits.close();
    limits = open();
    const team = holder('team', 'search', { maxConcurrent: 2 });
    await admitted([team]);
    // The admission never ran (its request went to the state and the connection dropped first).
    const charge = state.charge.bind(state);
    state.charge = async () => {
      state.charge = charge;
      throw new StateUnavailableError('the shared state did not answer within 150 ms', false, Promise.resolve({ answered: false }));
    };
    await admit([team]);
    await new Promise((resolve) => setImmediate(resolve));
    await limits.drain();
    // The slot given back was the first request's, still in flight: one too few, until the heartbeat.
    expect(await limits.read([team])).toMatchObject({ [team.key]: { maxConcurrent: 0 } });
    await vi.advanceTimersByTimeAsync(LEASE_MS / 3);
    expect(await limits.read([team])).toMatchObject({ [team.key]: { maxConcurrent: 1 } });
  });

  it('a slot is a short lease that the heartbeat renews while its request lives', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'setTimeout'] });
    await limits.close();
    limits = open();
    const token = holder('token', 'tok_1', { maxConcurrent: 1 });
    const first = await admitted([token]);
    // Past the first lease: the heartbeat (every third of it) has renewed the slot.
    for (let beat = 0; beat < 4; beat++) {
      time += LEASE_MS / 3;
      await vi.advanceTimersByTimeAsync(LEASE_MS / 3);
    }
    expect((await admit([token])).refusal).toMatchObject({ code: 'rate_limit_exceeded' });
    await settle(first, 0);
    await admitted([token]);
  });

  it("a live request's slot whose lease ended (the state away longer than it, or restarted empty) is taken again by the next heartbeat", async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'setTimeout'] });
    await limits.close();
    limits = open();
    const token = holder('token', 'tok_1', { maxConcurrent: 1 });
    await admitted([token]);
    time += LEASE_MS + 1;
    expect(await limits.read([token])).toMatchObject({ [token.key]: { maxConcurrent: 0 } });
    await vi.advanceTimersByTimeAsync(LEASE_MS / 3);
    expect(await limits.read([token])).toMatchObject({ [token.key]: { maxConcurrent: 1 } });
  });

  it('the slots of a process that stopped (no heartbeat, no settlement) are free once their lease ends', async () => {
    const token = holder('token', 'tok_1', { maxConcurrent: 2 });
    await admitted([token]);
    await admitted([token]);
    await limits.close();
    limits = open();
    time += LEASE_MS - 1;
    expect((await admit([token])).refusal).toMatchObject({ code: 'rate_limit_exceeded' });
    time += 1;
    await admitted([token]);
  });

  it('a settlement that fails is retried until it lands: the slot is given back and the usage counted', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'setTimeout'] });
    await limits.close();
    limits = open();
    const token = holder('token', 'tok_1', { maxConcurrent: 1, tokensPerDay: 100 });
    const first = await admitted([token], 10);
    state.down = true;
    await settle(first, 100);
    expect(limits.unsettled).toBe(2);
    // Still away at the first retry; back before the second.
    await vi.advanceTimersByTimeAsync(100);
    await limits.drain();
    state.down = false;
    await vi.advanceTimersByTimeAsync(200);
    await limits.drain();
    expect(limits.unsettled).toBe(0);
    // The 100 tokens are counted (the quota is spent), and the slot is free: in flight is checked
    // first, and would refuse with rate_limit_exceeded.
    expect((await admit([token], 10)).refusal).toMatchObject({ code: 'quota_exceeded' });
    expect(errors.length).toBeGreaterThan(0);
  });

  it('a release that failed is retried until it lands, to the name that took the slot: after a failure, slots are taken under a new name', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'setTimeout'] });
    await limits.close();
    limits = open();
    const token = holder('token', 'tok_1', { maxConcurrent: 2, tokensPerDay: 100 });
    const first = await admitted([token], 10);
    state.down = true;
    await settle(first, 30);
    expect(limits.unsettled).toBe(2);
    // The state answers again once this process's lease there has ended: the first's slot is free on its own.
    time += LEASE_MS;
    state.down = false;
    await admitted([token], 10);
    await vi.advanceTimersByTimeAsync(100);
    await limits.drain();
    expect(limits.unsettled).toBe(0);
    // The release landed on the name that took the first's slot, not on the second's: two in flight now.
    await admitted([token], 10);
    expect((await admit([token], 10)).refusal).toMatchObject({ code: 'rate_limit_exceeded' });
    expect(await limits.read([token])).toMatchObject({ [token.key]: { maxConcurrent: 2, tokensPerDay: 50 } });
  });

  it('a settlement of a quota the state lost does not start it again: the next admission rebuilds it from the ledger', async () => {
    const team = holder('team', 'search', { tokensPerDay: 1000 });
    const first = await admitted([team], 10);
    // Redis restarted empty while the request ran; the request log holds its row.
    await state.close();
    state = new FlakyState({ now: () => time });
    await limits.close();
    limits = open();
    await settle(first, 990);
    recorded = { tokens: 990, usd: 0 };
    expect((await admit([team], 10)).refusal).toBeNull();
    expect((await admit([team], 10)).refusal).toMatchObject({ code: 'quota_exceeded' });
  });

  it('no holder: nothing is charged and no state is touched', async () => {
    await state.close();
    expect(await admit([])).toMatchObject({ refusal: null, headers: {} });
    expect(errors).toHaveLength(0);
  });
});
