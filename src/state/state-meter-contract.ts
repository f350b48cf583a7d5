import { expect, it } from 'vitest';
import type { Meter } from './shared-state.js';
import type { ContractContext } from './state-contract.js';

/** The contract for meters: charge (counters and slot sets, limits, seeds). */
export function describeMeterChecks(context: ContractContext): void {
  const { ttlMs: TTL_MS, boundaryMarginMs: MARGIN_MS } = context.timing;
  const requests = (limit: number | null, amount = 1): Meter => ({ key: 'rpm:team', amount, limit, ttlMs: TTL_MS });

  it('charge: admits while every meter is under its limit, then refuses and changes nothing', async () => {
    const { state } = context;
    expect(await state.charge([requests(2)])).toEqual({ refused: -1, values: [1], missing: [], rooms: [] });
    expect(await state.charge([requests(2)])).toEqual({ refused: -1, values: [2], missing: [], rooms: [] });
    expect(await state.charge([requests(2)])).toEqual({ refused: 0, values: [2], missing: [], rooms: [] });
    // Several meters: the tightest refuses, and the others are not charged either.
    const tokens: Meter = { key: 'tpm:team', amount: 40, limit: 100, ttlMs: TTL_MS };
    expect(await state.charge([tokens, requests(2)])).toEqual({ refused: 1, values: [0, 2], missing: [], rooms: [] });
    expect(await state.charge([tokens, requests(5)])).toEqual({ refused: -1, values: [40, 3], missing: [], rooms: [] });
    // A limit is checked before adding: a large amount passes while the meter is under it.
    expect(await state.charge([{ ...tokens, amount: 500 }])).toMatchObject({ refused: -1, values: [540] });
    expect(await state.charge([{ ...tokens, amount: 1 }])).toMatchObject({ refused: 0, values: [540] });
    // A limit is checked whatever the amount: a request that reserves nothing is refused too.
    expect(await state.charge([{ ...tokens, amount: 0 }])).toMatchObject({ refused: 0, values: [540] });
    // Giving back has no limit.
    expect(await state.charge([{ ...tokens, amount: -450, limit: null }])).toMatchObject({ refused: -1, values: [90] });
    expect(await state.charge([{ ...tokens, amount: 0 }])).toMatchObject({ refused: -1, values: [90] });
    expect(await state.charge([{ ...tokens, amount: 0.25, limit: null }])).toMatchObject({ refused: -1, values: [90.25] });
  });

  it('charge: a counter lives ttlMs after its last change; a read of an absent one creates nothing', async () => {
    const { state, clock } = context;
    expect(await state.charge([requests(null, 0)])).toMatchObject({ values: [0] });
    await clock.advance(TTL_MS);
    await state.charge([requests(null, 3)]);
    await clock.advance(TTL_MS - MARGIN_MS);
    expect(await state.charge([requests(null, 0)])).toMatchObject({ values: [3] });
    await clock.advance(MARGIN_MS);
    expect(await state.charge([requests(null, 0)])).toMatchObject({ values: [0] });
    // Meters are a namespace of their own.
    await state.charge([{ key: 'shared', amount: 1, limit: null, ttlMs: TTL_MS }]);
    expect(await state.get('shared')).toBeNull();
  });

  it('charge: counters of one group each keep their own value, limit and lifetime', async () => {
    const { state, clock } = context;
    const short: Meter = { key: 'holder:rpm', group: 'holder', amount: 1, limit: 2, ttlMs: TTL_MS };
    const long: Meter = { key: 'holder:tokens', group: 'holder', amount: 10, limit: null, ttlMs: 4 * TTL_MS };
    expect(await state.charge([short, long])).toMatchObject({ refused: -1, values: [1, 10] });
    expect(await state.charge([short, { ...long, amount: 5 }])).toMatchObject({ refused: -1, values: [2, 15] });
    // The short one refuses alone; the long one was not changed by the refused step.
    expect(await state.charge([{ ...long, amount: 5 }, short])).toMatchObject({ refused: 1, values: [15, 2] });
    await clock.advance(TTL_MS);
    // The short one has ended; the long one, changed as late, is still counted.
    expect(
      await state.charge([
        { ...short, amount: 0 },
        { ...long, amount: 0 },
      ]),
    ).toMatchObject({ refused: -1, values: [0, 15] });
    // A counter of the group, with the group changed meanwhile, lives its own ttlMs after its own last change.
    await state.charge([{ ...short, amount: 1 }]);
    await clock.advance(TTL_MS - MARGIN_MS);
    await state.charge([{ ...long, amount: 1 }]);
    expect(await state.charge([{ ...short, amount: 0 }])).toMatchObject({ values: [1] });
    await clock.advance(MARGIN_MS);
    expect(
      await state.charge([
        { ...short, amount: 0 },
        { ...long, amount: 0 },
      ]),
    ).toMatchObject({ values: [0, 16] });
    // Another group's counter of another key is its own.
    expect(await state.charge([{ key: 'other:rpm', group: 'other', amount: 0, limit: null, ttlMs: TTL_MS }])).toMatchObject({ values: [0] });
    // A key is its own whatever it shares with its group's name.
    const named = (key: string, amount: number): Meter => ({ key, group: 'g', amount, limit: null, ttlMs: TTL_MS });
    expect(await state.charge([named('g:x', 1), named(':x', 2), named('x', 3), named('gx', 4), named('g', 5)])).toMatchObject({ values: [1, 2, 3, 4, 5] });
  });

  it("charge: slots are counted by owner, given back, and free when their owner's lease ends; a full set refuses", async () => {
    const { state, clock } = context;
    // Long enough that each quarter of it outlasts two margins (a clock that really waits).
    const LEASE_MS = Math.max(TTL_MS, 8 * MARGIN_MS);
    const slots = (owner: string, amount: number): Meter => ({ key: 'inflight:team', amount, limit: amount > 0 ? 3 : null, ttlMs: LEASE_MS, owner });
    expect(await state.charge([slots('a', 1)])).toMatchObject({ refused: -1, values: [1] });
    await clock.advance(LEASE_MS / 2);
    expect(await state.charge([slots('b', 1)])).toMatchObject({ refused: -1, values: [2] });
    expect(await state.charge([slots('b', 1)])).toMatchObject({ refused: -1, values: [3] });
    expect(await state.charge([slots('c', 1)])).toMatchObject({ refused: 0, values: [3] });
    expect(await state.charge([slots('b', -1)])).toMatchObject({ refused: -1, values: [2] });
    // An owner gives back no more than it holds; a read by one that holds none creates nothing.
    expect(await state.charge([slots('c', -5)])).toMatchObject({ refused: -1, values: [2] });
    expect(await state.charge([slots('x', 0)])).toMatchObject({ values: [2] });
    // Each owner's lease ends LEASE_MS after its last change: a's first, then b's.
    await clock.advance(LEASE_MS / 2 - MARGIN_MS);
    expect(await state.charge([slots('x', 0)])).toMatchObject({ values: [2] });
    await clock.advance(2 * MARGIN_MS);
    expect(await state.charge([slots('x', 0)])).toMatchObject({ values: [1] });
    // An owner whose lease ended holds nothing: giving back changes nothing.
    expect(await state.charge([slots('a', -1)])).toMatchObject({ values: [1] });
    await clock.advance(LEASE_MS / 2);
    expect(await state.charge([slots('x', 0)])).toMatchObject({ values: [0] });
  });

  it('charge: an absent counter that needs a seed stops the whole step until one is given', async () => {
    const { state } = context;
    const quota = (extra: Partial<Meter>): Meter => ({ key: 'quota:day', amount: 10, limit: 100, ttlMs: TTL_MS, needsSeed: true, ...extra });
    expect(await state.charge([requests(5), quota({})])).toEqual({ refused: -1, values: [0, 0], missing: [1], rooms: [] });
    expect(await state.charge([requests(5, 0)])).toMatchObject({ values: [0] });
    // Seeded at or over the limit: refused, and the seed is kept.
    expect(await state.charge([requests(5), quota({ seed: 100 })])).toEqual({ refused: 1, values: [0, 100], missing: [], rooms: [] });
    expect(await state.charge([quota({ amount: -30, limit: null })])).toEqual({ refused: -1, values: [70], missing: [], rooms: [] });
    // A present counter ignores a seed.
    expect(await state.charge([requests(5), quota({ seed: 0 })])).toEqual({ refused: -1, values: [1, 80], missing: [], rooms: [] });
  });

  it('charge: a counter marked ifPresent is changed only when it exists; an absent one is not created', async () => {
    const { state } = context;
    const settlement: Meter = { key: 'quota:settled', amount: 20, limit: null, ttlMs: TTL_MS, ifPresent: true };
    expect(await state.charge([settlement, requests(null, 1)])).toEqual({ refused: -1, values: [0, 1], missing: [], rooms: [] });
    // Still absent: a quota that needs a seed is reported missing rather than found at 20.
    expect(await state.charge([{ key: 'quota:settled', amount: 5, limit: 100, ttlMs: TTL_MS, needsSeed: true }])).toMatchObject({ missing: [0], rooms: [] });
    expect(await state.charge([{ key: 'quota:settled', amount: 5, limit: 100, ttlMs: TTL_MS, needsSeed: true, seed: 40 }])).toMatchObject({ values: [45] });
    expect(await state.charge([settlement])).toEqual({ refused: -1, values: [65], missing: [], rooms: [] });
  });

  it('charge: a key named more than once counts every change, each value the total so far (settlements of several requests in one step)', async () => {
    const { state } = context;
    const adjust = (amount: number): Meter => ({ key: 'tpm:repeated', amount, limit: null, ttlMs: TTL_MS, ifPresent: true });
    const slots = (owner: string, amount: number): Meter => ({ key: 'inflight:repeated', amount, limit: null, ttlMs: TTL_MS, owner });
    // Absent: the ifPresent changes leave it absent, even beside a plain change made later in the same step.
    expect(await state.charge([adjust(5), adjust(7)])).toEqual({ refused: -1, values: [0, 0], missing: [], rooms: [] });
    expect(await state.charge([{ ...adjust(10), ifPresent: false }, adjust(-3), adjust(0.5)])).toEqual({
      refused: -1,
      values: [10, 7, 7.5],
      missing: [],
      rooms: [],
    });
    expect(await state.charge([adjust(0)])).toMatchObject({ values: [7.5] });
    expect(await state.charge([slots('a', 1), slots('b', 1), slots('a', 1)])).toMatchObject({ refused: -1, values: [1, 2, 3] });
    expect(await state.charge([slots('a', -1), slots('b', -1), slots('b', -1)])).toMatchObject({ refused: -1, values: [2, 1, 1] });
  });

  it('charge: every charge naming an owner that holds slots renews its lease on all of them', async () => {
    const { state, clock } = context;
    const LEASE_MS = Math.max(TTL_MS, 8 * MARGIN_MS);
    const slots = (amount: number, owner = 'a'): Meter => ({ key: 'inflight:renewed', amount, limit: null, ttlMs: LEASE_MS, owner });
    expect(await state.charge([slots(2)])).toMatchObject({ values: [2] });
    await clock.advance(LEASE_MS / 2);
    // A heartbeat's renewal: nothing taken, the lease renewed.
    expect(await state.charge([slots(0)])).toMatchObject({ values: [2] });
    await clock.advance(LEASE_MS / 2 + MARGIN_MS);
    expect(await state.charge([slots(-1)])).toMatchObject({ values: [1] });
    await clock.advance(LEASE_MS - MARGIN_MS);
    expect(await state.charge([slots(0, 'reader')])).toMatchObject({ values: [1] });
    await clock.advance(2 * MARGIN_MS);
    expect(await state.charge([slots(0, 'reader')])).toMatchObject({ values: [0] });
  });

  it('charge: atLeast takes again the slots an owner holds that the state lost, and undoes nothing', async () => {
    const { state, clock } = context;
    const LEASE_MS = Math.max(TTL_MS, 8 * MARGIN_MS);
    const slots = (amount: number, atLeast?: number): Meter => ({ key: 'inflight:heartbeat', amount, limit: null, ttlMs: LEASE_MS, owner: 'a', atLeast });
    expect(await state.charge([slots(3)])).toMatchObject({ values: [3] });
    // A release on its way when the heartbeat counted 2: the heartbeat does not take it again.
    expect(await state.charge([slots(0, 2)])).toMatchObject({ values: [3] });
    expect(await state.charge([slots(-1)])).toMatchObject({ values: [2] });
    // The lease ended (the state away longer than it): the next heartbeat takes the slots again.
    await clock.advance(LEASE_MS + MARGIN_MS);
    expect(await state.charge([{ ...slots(0), owner: 'reader' }])).toMatchObject({ values: [0] });
    expect(await state.charge([slots(0, 2)])).toMatchObject({ values: [2] });
    await expect(state.charge([{ ...slots(0), atLeast: 1.5 }])).rejects.toThrow(TypeError);
    await expect(state.charge([{ key: 'counter', amount: 0, limit: null, ttlMs: TTL_MS, atLeast: 1 }])).rejects.toThrow(TypeError);
  });

  it('charge: room is taken only while at least ROOM_SHARE times it is left under the limit after the amount', async () => {
    const { state } = context;
    const tokens = (amount: number, room?: number, limit = 1_000): Meter => ({ key: 'tpm:room', amount, limit, ttlMs: TTL_MS, room });
    // 1,000 - 0 - 10 = 990 ≥ 16 × 60: the amount and the room are added.
    expect(await state.charge([tokens(10, 60)])).toEqual({ refused: -1, values: [70], missing: [], rooms: [0] });
    // 1,000 - 70 - 10 = 920 < 16 × 60: the amount alone, as without room.
    expect(await state.charge([tokens(10, 60)])).toEqual({ refused: -1, values: [80], missing: [], rooms: [] });
    expect(await state.charge([requests(null, 0), tokens(0, 57)])).toEqual({ refused: -1, values: [0, 137], missing: [], rooms: [1] });
    // Refused like any meter at its limit, room or not; nothing changes.
    expect(await state.charge([tokens(5, 1, 137)])).toEqual({ refused: 0, values: [137], missing: [], rooms: [] });
    // A meter named again in the same step sees the room the one before it took (and, changing nothing, reads as it was before the step).
    expect(await state.charge([tokens(0, 52), tokens(0, 52)])).toEqual({ refused: -1, values: [189, 137], missing: [], rooms: [0] });
    // Seeded counters take room from their seed.
    const quota: Meter = { key: 'quota:room', amount: 10, limit: 1_000, ttlMs: TTL_MS, needsSeed: true, room: 40 };
    expect(await state.charge([quota])).toEqual({ refused: -1, values: [0], missing: [0], rooms: [] });
    expect(await state.charge([{ ...quota, seed: 300 }])).toEqual({ refused: -1, values: [350], missing: [], rooms: [0] });
    // Room only on a counter with a limit that the step may create.
    await expect(state.charge([{ ...tokens(1, 5), limit: null }])).rejects.toThrow(TypeError);
    await expect(state.charge([{ ...tokens(1, 5), ifPresent: true }])).rejects.toThrow(TypeError);
    // A slot's room is whole slots, taken with the slot itself.
    await expect(state.charge([{ ...tokens(1, 5), owner: 'a' }])).resolves.toMatchObject({ rooms: [0] });
    await expect(state.charge([{ ...tokens(-1, 5), owner: 'a' }])).rejects.toThrow(TypeError);
    await expect(state.charge([{ ...tokens(1, 2.5), owner: 'b' }])).rejects.toThrow(TypeError);
    await expect(state.charge([tokens(1, 0)])).rejects.toThrow(TypeError);
    expect(await state.charge([tokens(0, undefined, 10_000)])).toMatchObject({ values: [189] });
  });

  it("charge: a slot room is that many more slots for the owner, under the owner's one lease", async () => {
    const { state, clock } = context;
    const LEASE_MS = Math.max(TTL_MS, 8 * MARGIN_MS);
    const slots = (owner: string, amount: number, room?: number, limit: number | null = 100): Meter => ({
      key: 'inflight:room',
      amount,
      limit: amount > 0 ? limit : null,
      ttlMs: LEASE_MS,
      owner,
      room,
    });
    // 100 - 0 - 1 = 99 ≥ 16 × 6: the slot and six more.
    expect(await state.charge([slots('a', 1, 6)])).toEqual({ refused: -1, values: [7], missing: [], rooms: [0] });
    // 100 - 7 - 1 = 92 < 16 × 6: the slot alone.
    expect(await state.charge([slots('b', 1, 6)])).toEqual({ refused: -1, values: [8], missing: [], rooms: [] });
    expect(await state.charge([slots('a', -2), slots('b', -1)])).toMatchObject({ values: [6, 5] });
    // Refused at the limit like any slot: nothing taken.
    expect(await state.charge([slots('c', 1, 1, 5)])).toEqual({ refused: 0, values: [5], missing: [], rooms: [] });
    // The room's slots live by their owner's lease: renewed, they stay; b's ended with its lease.
    await clock.advance(LEASE_MS / 2);
    expect(await state.charge([slots('a', 0)])).toMatchObject({ values: [5] });
    await clock.advance(LEASE_MS / 2 + MARGIN_MS);
    expect(await state.charge([slots('x', 0)])).toMatchObject({ values: [5] });
    await clock.advance(LEASE_MS / 2);
    expect(await state.charge([slots('x', 0)])).toMatchObject({ values: [0] });
  });

  it('charge: rejects invalid meters with a TypeError, changing nothing', async () => {
    const { state } = context;
    for (const invalid of [0, -1, 1.5, Number.NaN]) await expect(state.charge([{ ...requests(1), ttlMs: invalid }])).rejects.toThrow(TypeError);
    await expect(state.charge([{ ...requests(1), amount: Number.NaN }])).rejects.toThrow(TypeError);
    await expect(state.charge([{ ...requests(1), owner: 'a', amount: 1.5 }])).rejects.toThrow(TypeError);
    await expect(state.charge([requests(1), { ...requests(1), limit: Number.NaN }])).rejects.toThrow(TypeError);
    expect(await state.charge([requests(null, 0)])).toMatchObject({ values: [0] });
    expect(await state.charge([])).toEqual({ refused: -1, values: [], missing: [], rooms: [] });
  });

  it('charge: a step of 1,500 meters of 300 groups (the settlements of many holders that end together) is one step like any', async () => {
    const { state } = context;
    const meters: Meter[] = [];
    for (let group = 0; group < 300; group++) {
      for (let counter = 0; counter < 4; counter++)
        meters.push({ key: `g${group}:c${counter}`, group: `g${group}`, amount: counter + 1, limit: null, ttlMs: TTL_MS });
      meters.push({ key: `g${group}:in-flight`, group: `g${group}`, amount: 1, limit: null, ttlMs: TTL_MS, owner: 'p' });
    }
    const first = await state.charge(meters);
    expect(first.refused).toBe(-1);
    expect(first.values).toEqual(meters.map((meter) => meter.amount));
    const read = await state.charge(meters.map((meter) => ({ ...meter, amount: 0 })));
    expect(read.values).toEqual(meters.map((meter) => meter.amount));
  });

  it('charge: handles on one backend together let through exactly the limit', async () => {
    const { state, clock, openSecondHandle } = context;
    if (openSecondHandle === undefined) return;
    const other = await openSecondHandle(clock);
    try {
      const meters = (owner: string): Meter[] => [requests(25), { key: 'inflight', amount: 1, limit: 30, ttlMs: TTL_MS, owner }];
      const outcomes = await Promise.all(Array.from({ length: 60 }, (_, index) => (index % 2 === 0 ? state : other).charge(meters(`p${index % 2}`))));
      expect(outcomes.filter((outcome) => outcome.refused === -1)).toHaveLength(25);
      expect(await other.charge([requests(null, 0)])).toMatchObject({ values: [25] });
    } finally {
      await other.close();
    }
  });
}
