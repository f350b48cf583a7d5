import { expect, it } from 'vitest';
import type { ContractContext } from './state-contract.js';

/** Messages arrive asynchronously: polls (in real time, which is not the time TTLs are measured in) until `done`. */
async function eventually(done: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not done within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** The contract for expiring maps, messages, availability and handles sharing a backend. */
export function describeMapAndMessageChecks(context: ContractContext): void {
  const { ttlMs: TTL_MS, windowMs: WINDOW_MS } = context.timing;

  it('keeps each field of a map for its own TTL, and reads only the live ones', async () => {
    const { state, clock } = context;
    expect(await state.readFields('in-flight')).toEqual({});
    await state.setField('in-flight', 'replica-a', '{"chat":2}', TTL_MS);
    await clock.advance(TTL_MS / 2);
    await state.setField('in-flight', 'replica-b', '{"chat":1}', TTL_MS);
    expect(await state.readFields('in-flight')).toEqual({ 'replica-a': '{"chat":2}', 'replica-b': '{"chat":1}' });
    // With a clock that moves only when told, each of these reads is exactly at a field's expiry.
    await clock.advance(TTL_MS / 2);
    expect(await state.readFields('in-flight')).toEqual({ 'replica-b': '{"chat":1}' });
    await state.setField('in-flight', 'replica-a', '{"chat":3}', TTL_MS);
    await clock.advance(TTL_MS / 2);
    expect(await state.readFields('in-flight')).toEqual({ 'replica-a': '{"chat":3}' });
    await clock.advance(TTL_MS / 2);
    expect(await state.readFields('in-flight')).toEqual({});
  });

  it('replaces a field with its TTL, and a short-lived field never cuts a longer-lived one short', async () => {
    const { state, clock } = context;
    await state.setField('replaced', 'replica-a', 'first', 10 * TTL_MS);
    await state.setField('replaced', 'replica-a', 'second', TTL_MS);
    await state.setField('mixed', 'short', 'gone soon', TTL_MS);
    await state.setField('mixed', 'long', 'kept', 3 * TTL_MS);
    await state.setField('mixed', 'shorter', 'gone sooner', TTL_MS / 2);
    await clock.advance(2 * TTL_MS);
    expect(await state.readFields('replaced')).toEqual({});
    expect(await state.readFields('mixed')).toEqual({ long: 'kept' });
    await clock.advance(TTL_MS);
    expect(await state.readFields('mixed')).toEqual({});
  });

  it('keeps maps apart from values and counters under the same key', async () => {
    const { state } = context;
    await state.setField('team:search', 'replica-a', '1', TTL_MS);
    expect(await state.get('team:search')).toBeNull();
    expect((await state.addToWindow('team:search', 0, WINDOW_MS)).current).toBe(0);
    await state.set('team:search', 'value', TTL_MS);
    await state.addToWindow('team:search', 5, WINDOW_MS);
    expect(await state.readFields('team:search')).toEqual({ 'replica-a': '1' });
    expect(await state.get('team:search')).toBe('value');
    expect(await state.delete('team:search')).toBe(true);
    expect(await state.readFields('team:search')).toEqual({ 'replica-a': '1' });
    expect(await state.readFields('team:other')).toEqual({});
  });

  it('takes any string as a field name or value', async () => {
    const { state } = context;
    const fields: Array<[string, string]> = [
      ['', 'an empty name'],
      ['__proto__', 'not a prototype'],
      ['replica 1/a:b', ''],
    ];
    for (const [field, value] of fields) await state.setField('names', field, value, TTL_MS);
    const read = await state.readFields('names');
    expect(Object.entries(read).sort()).toEqual([...fields].sort());
    expect(Object.getPrototypeOf(read)).toBe(Object.prototype);
  });

  it('delivers each message to every subscriber, its publisher included, in publish order and never inside publish', async () => {
    const { state } = context;
    const first: string[] = [];
    const second: string[] = [];
    const elsewhere: string[] = [];
    await state.subscribe('credentials', (message) => first.push(message));
    await state.subscribe('credentials', (message) => second.push(message));
    await state.subscribe('sessions', (message) => elsewhere.push(message));
    await state.publish('nobody-listens', 'lost');
    const sent = [...Array.from({ length: 50 }, (_, index) => `message-${index}`), ''];
    const publishing = Promise.all(sent.map((message) => state.publish('credentials', message)));
    expect(first).toEqual([]);
    await publishing;
    await eventually(() => first.length === sent.length && second.length === sent.length);
    expect(first).toEqual(sent);
    expect(second).toEqual(sent);
    expect(elsewhere).toEqual([]);
  });

  it('stops delivering to a subscription once it is unsubscribed, and only to that one', async () => {
    const { state } = context;
    const kept: string[] = [];
    const dropped: string[] = [];
    const listener = (message: string): void => {
      dropped.push(message);
    };
    const unsubscribeKept = await state.subscribe('events', (message) => kept.push(message));
    const unsubscribe = await state.subscribe('events', listener);
    // The same function subscribed twice is two subscriptions, each removed on its own.
    const unsubscribeAgain = await state.subscribe('events', listener);
    await state.publish('events', 'one');
    await eventually(() => kept.length === 1);
    expect(dropped).toEqual(['one', 'one']);
    await unsubscribe();
    await unsubscribe();
    await state.publish('events', 'two');
    await eventually(() => kept.length === 2);
    expect(dropped).toEqual(['one', 'one', 'two']);
    await unsubscribeAgain();
    await state.publish('events', 'three');
    await eventually(() => kept.length === 3);
    expect(dropped).toEqual(['one', 'one', 'two']);

    // From the moment unsubscribe is called, not even a message already on its way is delivered.
    const late: string[] = [];
    const unsubscribeLate = await state.subscribe('events', (message) => late.push(message));
    const publishing = state.publish('events', 'on its way');
    await unsubscribeLate();
    await publishing;
    await eventually(() => kept.length === 4);
    expect(late).toEqual([]);

    // A channel left with no subscriber at all can be subscribed to afresh.
    await unsubscribeKept();
    const again: string[] = [];
    await state.subscribe('events', (message) => again.push(message));
    await state.publish('events', 'four');
    await eventually(() => again.length === 1);
    expect(kept).toEqual(['one', 'two', 'three', 'on its way']);
  });

  it('registers availability listeners synchronously, and tells them nothing while the backend stays reachable', async () => {
    const { state } = context;
    const heard: boolean[] = [];
    const unregister = state.onAvailability((available) => heard.push(available));
    await state.set('key', 'value', TTL_MS);
    await state.publish('events', 'message');
    expect(heard).toEqual([]);
    unregister();
    unregister();
  });

  // Registered only where it means something: every MemoryState is a backend of its own.
  if (context.openSecondHandle !== undefined)
    it("two handles on one backend see each other's values, counters, maps and messages", async () => {
      const { state, clock } = context;
      const other = await context.openSecondHandle!(clock);
      try {
        await state.set('session:1', 'credential-a', TTL_MS);
        expect(await other.get('session:1')).toBe('credential-a');
        expect(await other.compareAndSet('session:1', 'credential-a', 'credential-b', TTL_MS)).toBe(true);
        expect(await state.getAndTouch('session:1', TTL_MS)).toBe('credential-b');

        await state.setField('in-flight', 'replica-a', '1', TTL_MS);
        await other.setField('in-flight', 'replica-b', '2', TTL_MS);
        expect(await state.readFields('in-flight')).toEqual({ 'replica-a': '1', 'replica-b': '2' });
        expect(await other.readFields('in-flight')).toEqual({ 'replica-a': '1', 'replica-b': '2' });

        await context.enterNextWindow(1);
        await state.addToWindow('team:search', 2, WINDOW_MS);
        expect((await other.addToWindow('team:search', 3, WINDOW_MS)).current).toBe(5);

        const heardByFirst: string[] = [];
        const heardBySecond: string[] = [];
        await state.subscribe('events', (message) => heardByFirst.push(message));
        await other.subscribe('events', (message) => heardBySecond.push(message));
        await state.publish('events', 'from-first');
        await other.publish('events', 'from-second');
        await eventually(() => heardByFirst.length === 2 && heardBySecond.length === 2);
        expect(heardByFirst).toEqual(['from-first', 'from-second']);
        expect(heardBySecond).toEqual(['from-first', 'from-second']);
      } finally {
        await other.close();
      }
    });
}
