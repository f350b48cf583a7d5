import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/index.js';
import { LINKS_PER_TURN, ResponseStore, type ResponseStateStore } from './response-store.js';

/**
 * The two operations the store uses, over a Map, remembering each TTL and what each write asked
 * for; the budget only refuses what is too big alone (SharedState's contract suite checks eviction).
 * `failing` makes them reject.
 */
function mapState(): ResponseStateStore & { values: Map<string, string>; ttls: Map<string, number>; failing: boolean; reads: number } {
  const values = new Map<string, string>();
  const ttls = new Map<string, number>();
  const state = {
    values,
    ttls,
    failing: false,
    reads: 0,
    async get(key: string) {
      if (state.failing) throw new Error('connection lost');
      state.reads += 1;
      return values.get(key) ?? null;
    },
    async setWithinBudget(
      _pool: string,
      _group: string,
      entries: ReadonlyArray<{ key: string; value: string }>,
      ttlMs: number,
      budget: { groupBytes: number; totalBytes: number },
    ) {
      if (state.failing) throw new Error('connection lost');
      const bytes = entries.reduce((sum, entry) => sum + entry.key.length + entry.value.length, 0);
      if (bytes > budget.groupBytes) return { stored: false, evicted: 0 };
      for (const { key, value } of entries) {
        values.set(key, value);
        ttls.set(key, ttlMs);
      }
      return { stored: true, evicted: 0 };
    },
  };
  return state;
}

const BUDGET = { teamBytes: 1_000_000, totalBytes: 10_000_000 };

const ITEMS = [
  { type: 'message' as const, role: 'user' as const, content: 'Hi' },
  { type: 'message' as const, id: 'msg_1', role: 'assistant' as const, content: [{ type: 'output_text' as const, text: 'Hello' }] },
  { type: 'function_call' as const, id: 'fc_1', call_id: 'call_1', name: 'lookup', arguments: '{}' },
];

describe('ResponseStore', () => {
  it('keeps a response and each output item for the retention, for its team only', async () => {
    const state = mapState();
    const store = new ResponseStore(state, 86_400_000, BUDGET, () => undefined);
    await store.save('search', 'resp_1', { session: 'inf_abc', earlier: [], items: ITEMS }, ITEMS.slice(1));
    expect(await store.find('search', 'resp_1')).toEqual({ session: 'inf_abc', items: ITEMS, links: ['resp_1'] });
    expect(await store.findItem('search', 'msg_1')).toEqual(ITEMS[1]);
    expect(await store.findItem('search', 'fc_1')).toEqual(ITEMS[2]);
    expect(await store.find('ads', 'resp_1')).toBeNull();
    expect(await store.findItem('ads', 'msg_1')).toBeNull();
    expect(await store.find('search', 'resp_2')).toBeNull();
    expect([...state.ttls.values()]).toEqual([86_400_000, 86_400_000, 86_400_000]);
  });

  it('keys cannot be confused across teams: the team is length-prefixed', () => {
    expect(ResponseStore.responseKey('ab', 'cresp_1')).not.toBe(ResponseStore.responseKey('abc', 'resp_1'));
    expect(ResponseStore.itemKey('a', 'msg')).toBe('response-item:1:amsg');
  });

  it('remembers where a passed-through response was made, with no conversation', async () => {
    const store = new ResponseStore(mapState(), 1_000, BUDGET, () => undefined);
    await store.save('search', 'resp_upstream', { session: 'chat-7', earlier: [], items: null }, []);
    expect(await store.find('search', 'resp_upstream')).toEqual({ session: 'chat-7', items: null, links: ['resp_upstream'] });
  });

  it('reads a value it cannot understand as nothing stored', async () => {
    const state = mapState();
    const store = new ResponseStore(state, 1_000, BUDGET, () => undefined);
    state.values.set(ResponseStore.responseKey('t', 'resp_bad'), '{not json');
    state.values.set(ResponseStore.itemKey('t', 'msg_bad'), '"a string"');
    expect(await store.find('t', 'resp_bad')).toBeNull();
    expect(await store.findItem('t', 'msg_bad')).toBeNull();
  });

  it('a failed read is 503 state_unavailable, never "not found"; a failed write is reported, not thrown', async () => {
    const state = mapState();
    const errors: unknown[] = [];
    const store = new ResponseStore(state, 1_000, BUDGET, (error) => errors.push(error));
    state.failing = true;
    const failure = await store.find('t', 'resp_1').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(GatewayError);
    expect(failure).toMatchObject({ code: 'state_unavailable', status: 503 });
    await expect(store.save('t', 'resp_1', { session: null, earlier: [], items: [] }, ITEMS)).resolves.toBeUndefined();
    expect(errors).toHaveLength(1);
  });

  it('stores a conversation once: each turn its own items, linked to the earlier ones, read back whole in a few reads', async () => {
    const state = mapState();
    const store = new ResponseStore(state, 1_000, BUDGET, () => undefined);
    const TURNS = 40;
    const turnText = (turn: number) => `turn ${turn} ${'x'.repeat(1_000)}`;
    let previous: { links: string[] } | null = null;
    for (let turn = 0; turn < TURNS; turn += 1) {
      const items = [{ type: 'message' as const, role: 'user' as const, content: turnText(turn) }];
      await store.save('t', `resp_${turn}`, { session: null, earlier: previous?.links ?? [], items }, []);
      previous = await store.find('t', `resp_${turn}`);
      expect(previous?.links.length).toBe(Math.min(turn + 1, LINKS_PER_TURN));
    }
    state.reads = 0;
    const whole = await store.find('t', `resp_${TURNS - 1}`);
    expect(whole?.items?.map((item) => ('content' in item ? item.content : null))).toEqual(Array.from({ length: TURNS }, (_, turn) => turnText(turn)));
    // One read for the newest, then one batch per LINKS_PER_TURN turns.
    expect(state.reads).toBe(TURNS);
    const stored = [...state.values.values()].reduce((sum, value) => sum + value.length, 0);
    // Each turn about 1 KB of its own and at most 16 links: linear in the turns. Whole at every turn, it was 20 times this.
    expect(stored).toBeLessThan(TURNS * 2_200);
  });

  it('a conversation with a turn missing (expired or evicted) is not found, rather than continued with a gap', async () => {
    const state = mapState();
    const store = new ResponseStore(state, 1_000, BUDGET, () => undefined);
    const item = { type: 'message' as const, role: 'user' as const, content: 'hi' };
    await store.save('t', 'resp_a', { session: null, earlier: [], items: [item] }, []);
    await store.save('t', 'resp_b', { session: null, earlier: ['resp_a'], items: [item] }, []);
    await store.save('t', 'resp_c', { session: null, earlier: ['resp_a', 'resp_b'], items: [item] }, []);
    state.values.delete(ResponseStore.responseKey('t', 'resp_a'));
    expect(await store.find('t', 'resp_c')).toBeNull();
    expect(await store.find('t', 'resp_b')).toBeNull();
  });

  it('a turn too big for the team budget is answered but not stored, and reported', async () => {
    const state = mapState();
    const errors: unknown[] = [];
    const store = new ResponseStore(state, 1_000, { teamBytes: 500, totalBytes: 10_000 }, (error) => errors.push(error));
    await store.save('t', 'resp_big', { session: null, earlier: [], items: [{ type: 'message', role: 'user', content: 'x'.repeat(600) }] }, []);
    expect(await store.find('t', 'resp_big')).toBeNull();
    expect(String(errors[0])).toMatch(/more than responses.max_bytes_per_team/);
  });
});
