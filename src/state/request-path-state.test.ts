import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryState } from './memory-state.js';
import { RequestPathState, StateUnavailableError } from './request-path-state.js';
import type { ChargeOutcome, Meter } from './shared-state.js';
import { describeStateContract } from './state-contract.js';

// Nothing is slow here, so the wrapper must be a state like any other.
describeStateContract('the request path over memory', async (clock) => new RequestPathState(new MemoryState({ now: () => clock.now() }), { budgetMs: 10_000 }));

/** A memory state whose `get` and `charge` wait for `gate` while it is set, and whose availability the test tells. */
class GatedState extends MemoryState {
  gate: Promise<void> | null = null;
  gets = 0;
  readonly listeners = new Set<(available: boolean) => void>();

  override async get(key: string): Promise<string | null> {
    this.gets++;
    if (this.gate !== null) await this.gate;
    return super.get(key);
  }

  /** Set: a charge runs, then its reply is lost (a connection dropped under it). */
  loseReplies = false;

  override async charge(meters: readonly Meter[]): Promise<ChargeOutcome> {
    if (this.gate !== null) await this.gate;
    const outcome = await super.charge(meters);
    if (this.loseReplies) throw new Error('Connection is closed.');
    return outcome;
  }

  /** The meters as they are, bypassing the gate and the lost replies. */
  async read(meters: readonly Meter[]): Promise<number[]> {
    return (await super.charge(meters.map((meter) => ({ ...meter, amount: 0, limit: null })))).values;
  }

  override onAvailability(listener: (available: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

function gated(): { inner: GatedState; open: () => void } {
  const inner = new GatedState();
  let open: () => void = () => undefined;
  inner.gate = new Promise((resolve) => {
    open = resolve;
  });
  return { inner, open };
}

describe('RequestPathState', () => {
  const opened: RequestPathState[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((state) => state.close()));
  });

  function guard(inner: GatedState, events: string[] = [], failuresToOpen = 3): RequestPathState {
    const state = new RequestPathState(inner, {
      budgetMs: 20,
      failuresToOpen,
      probeIntervalMs: 10,
      onDown: () => events.push('down'),
      onUp: () => events.push('up'),
    });
    opened.push(state);
    return state;
  }

  it('gives up on an operation past the budget, as the state unavailable, and counts it', async () => {
    const { inner, open } = gated();
    const state = guard(inner);
    await expect(state.get('k')).rejects.toMatchObject({
      name: 'StateUnavailableError',
      message: 'the shared state did not answer within 20 ms',
      breakerOpen: false,
    });
    open();
    expect(await state.get('k')).toBeNull();
    expect(state.status()).toMatchObject({ available: true, timeouts: 1, failures: 1, outages: 0 });
  });

  it('declares the state down after failures in a row, once, then refuses without asking until a probe is answered', async () => {
    const { inner, open } = gated();
    const events: string[] = [];
    const state = guard(inner, events);
    for (let index = 0; index < 3; index++) await expect(state.get('k')).rejects.toBeInstanceOf(StateUnavailableError);
    expect(events).toEqual(['down']);
    const asked = inner.gets;
    const refused = await state.get('k').catch((error: unknown) => error);
    expect(refused).toMatchObject({ breakerOpen: true });
    expect(state.status()).toMatchObject({ available: false, outages: 1, refused: 1 });
    // Only the probe asks while it is down; once it is answered, requests use the state again.
    open();
    await vi.waitFor(() => expect(state.status().available).toBe(true), { timeout: 5_000, interval: 5 });
    expect(inner.gets).toBeGreaterThan(asked);
    expect(events).toEqual(['down', 'up']);
    await state.set('k', 'v', 60_000);
    expect(await state.get('k')).toBe('v');
  });

  it('is not declared down by a lost connection alone, and probes at once when the connection is back', async () => {
    const { inner, open } = gated();
    const events: string[] = [];
    // A probe interval no test waits for: only the connection's news can make it probe.
    const state = new RequestPathState(inner, {
      budgetMs: 20,
      failuresToOpen: 1,
      probeIntervalMs: 3_600_000,
      onDown: () => events.push('down'),
      onUp: () => events.push('up'),
    });
    opened.push(state);
    for (const listener of inner.listeners) listener(false);
    expect(state.status().available).toBe(true);
    await expect(state.get('k')).rejects.toBeInstanceOf(StateUnavailableError);
    expect(events).toEqual(['down']);
    open();
    for (const listener of inner.listeners) listener(true);
    await vi.waitFor(() => expect(state.status().available).toBe(true), { timeout: 500, interval: 5 });
    expect(events).toEqual(['down', 'up']);
  });

  it('does not count a bad argument against the state', async () => {
    const state = guard(new GatedState(), [], 1);
    await expect(state.set('k', 'v', -1)).rejects.toBeInstanceOf(TypeError);
    expect(state.status()).toMatchObject({ available: true, failures: 0 });
  });

  it('tells the caller that stopped waiting what became of its operation: answered with its value, or failed', async () => {
    const meter: Meter = { key: 'rpm', amount: 1, limit: 10, ttlMs: 60_000 };
    const first = gated();
    const answered = await guard(first.inner, [], 10)
      .charge([meter])
      .catch((error: unknown) => error);
    expect(answered).toBeInstanceOf(StateUnavailableError);
    first.open();
    expect(await (answered as StateUnavailableError).late).toEqual({ answered: true, value: { refused: -1, values: [1], missing: [], rooms: [] } });

    const second = gated();
    second.inner.loseReplies = true;
    const lost = await guard(second.inner, [], 10)
      .charge([meter])
      .catch((error: unknown) => error);
    second.open();
    expect(await (lost as StateUnavailableError).late).toEqual({ answered: false });
    // It ran all the same: the state undoes nothing; what undoing means is the caller's to decide.
    expect(await second.inner.read([meter])).toEqual([1]);
  });

  it('refuses at once, with nothing late, while the breaker is open', async () => {
    const { inner } = gated();
    const state = guard(inner, [], 1);
    await expect(state.get('k')).rejects.toBeInstanceOf(StateUnavailableError);
    const refused = await state.get('k').catch((error: unknown) => error);
    expect(refused).toMatchObject({ breakerOpen: true, late: null });
  });
});
