import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/index.js';
import { ResponseStore, type ResponseStateStore } from './response-store.js';

/** The two operations the store uses, over a Map, remembering each TTL; `failing` makes them reject. */
function mapState(): ResponseStateStore & { values: Map<string, string>; ttls: Map<string, number>; failing: boolean } {
  const values = new Map<string, string>();
  const ttls = new Map<string, number>();
  const state = {
    values,
    ttls,
    failing: false,
    async get(key: string) {
      if (state.failing) throw new Error('connection lost');
      return values.get(key) ?? null;
    },
    async set(key: string, value: string, ttlMs: number) {
      if (state.failing) throw new Error('connection lost');
      values.set(key, value);
      ttls.set(key, ttlMs);
    },
  };
  return state;
}

const ITEMS = [
  { type: 'message' as const, role: 'user' as const, content: 'Hi' },
  { type: 'message' as const, id: 'msg_1', role: 'assistant' as const, content: [{ type: 'output_text' as const, text: 'Hello' }] },
  { type: 'function_call' as const, id: 'fc_1', call_id: 'call_1', name: 'lookup', arguments: '{}' },
];

describe('ResponseStore', () => {
  it('keeps a response and each output item for the retention, for its team only', async () => {
    const state = mapState();
    const store = new ResponseStore(state, 86_400_000, () => undefined);
    await store.save('search', 'resp_1', { session: 'inf_abc', items: ITEMS }, ITEMS.slice(1));
    expect(await store.find('search', 'resp_1')).toEqual({ session: 'inf_abc', items: ITEMS });
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
    const store = new ResponseStore(mapState(), 1_000, () => undefined);
    await store.save('search', 'resp_upstream', { session: 'chat-7', items: null }, []);
    expect(await store.find('search', 'resp_upstream')).toEqual({ session: 'chat-7', items: null });
  });

  it('reads a value it cannot understand as nothing stored', async () => {
    const state = mapState();
    const store = new ResponseStore(state, 1_000, () => undefined);
    state.values.set(ResponseStore.responseKey('t', 'resp_bad'), '{not json');
    state.values.set(ResponseStore.itemKey('t', 'msg_bad'), '"a string"');
    expect(await store.find('t', 'resp_bad')).toBeNull();
    expect(await store.findItem('t', 'msg_bad')).toBeNull();
  });

  it('a failed read is 503 state_unavailable, never "not found"; a failed write is reported, not thrown', async () => {
    const state = mapState();
    const errors: unknown[] = [];
    const store = new ResponseStore(state, 1_000, (error) => errors.push(error));
    state.failing = true;
    const failure = await store.find('t', 'resp_1').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(GatewayError);
    expect(failure).toMatchObject({ code: 'state_unavailable', status: 503 });
    await expect(store.save('t', 'resp_1', { session: null, items: [] }, ITEMS)).resolves.toBeUndefined();
    expect(errors).toHaveLength(1);
  });
});
