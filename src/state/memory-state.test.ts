import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryState } from './memory-state.js';
import { describeStateContract, manualClock } from './state-contract.js';

describeStateContract('memory', async (clock) => new MemoryState({ now: () => clock.now() }));

describe('MemoryState', () => {
  const opened: MemoryState[] = [];
  function openMemory(clock = manualClock(), sweepIntervalMs?: number): MemoryState {
    const state = new MemoryState({ now: () => clock.now(), ...(sweepIntervalMs === undefined ? {} : { sweepIntervalMs }) });
    opened.push(state);
    return state;
  }

  afterEach(async () => {
    vi.useRealTimers();
    await Promise.all(opened.splice(0).map((state) => state.close()));
  });

  it('removes an expired entry when its key is used again', async () => {
    const clock = manualClock();
    const state = openMemory(clock);
    await state.set('value', 'v', 1_000);
    await state.addToWindow('counter', 1, 1_000);
    await state.setField('map', 'replica-a', '1', 1_000);
    await state.setField('map', 'replica-b', '1', 1_000);
    clock.advance(2_000);
    expect(state.size).toBe(4);
    expect(await state.get('value')).toBeNull();
    expect(await state.addToWindow('counter', 0, 1_000)).toMatchObject({ current: 0, previous: 0 });
    expect(await state.readFields('map')).toEqual({});
    expect(state.size).toBe(0);
  });

  it('sweeps expired keys that nobody uses again, and keeps the live ones', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const clock = manualClock();
    const state = openMemory(clock, 5_000);
    for (let index = 0; index < 1_000; index += 1) {
      await state.set(`session:${index}`, 'credential', 1_000);
      await state.addToWindow(`team:${index}`, 1, 1_000);
      await state.setField(`in-flight:${index}`, 'replica-a', '1', 1_000);
    }
    await state.set('session:kept', 'credential', 60_000);
    await state.addToWindow('team:kept', 1, 60_000);
    await state.setField('in-flight:kept', 'replica-a', '1', 1_000);
    await state.setField('in-flight:kept', 'replica-b', '2', 60_000);
    expect(state.size).toBe(3_004);
    clock.advance(3_000);
    vi.advanceTimersByTime(5_000);
    expect(state.size).toBe(3);
    expect(await state.get('session:kept')).toBe('credential');
    expect((await state.addToWindow('team:kept', 0, 60_000)).current).toBe(1);
    expect(await state.readFields('in-flight:kept')).toEqual({ 'replica-b': '2' });
  });

  it('holds one entry per key, however often it is written and however many windows pass', async () => {
    const clock = manualClock();
    const state = openMemory(clock);
    for (let index = 0; index < 10_000; index += 1) {
      await state.set('session:1', `credential-${index % 3}`, 1_000);
      await state.addToWindow('team:search', 1, 1_000);
      clock.advance(250);
    }
    expect(state.size).toBe(2);
  });

  it('stores nothing for a read of a counter never counted in, a map never written or a value never set', async () => {
    const state = openMemory();
    for (let index = 0; index < 100; index += 1) {
      await state.addToWindow(`team:${index}`, 0, 1_000);
      await state.readFields(`in-flight:${index}`);
      await state.getAndTouch(`session:${index}`, 1_000);
      await state.publish(`channel:${index}`, 'nobody listens');
    }
    expect(state.size).toBe(0);
  });

  it('drops a message on its way to a state closed before it arrives', async () => {
    const state = openMemory();
    const heard: string[] = [];
    await state.subscribe('events', (message) => heard.push(message));
    await state.publish('events', 'delivered');
    const publishing = state.publish('events', 'dropped');
    await state.close();
    await publishing;
    await new Promise((resolve) => setImmediate(resolve));
    expect(heard).toEqual(['delivered']);
  });

  it('never tells availability listeners anything: the backend is this process', async () => {
    const state = openMemory();
    const heard: boolean[] = [];
    const unregister = state.onAvailability((available) => heard.push(available));
    await state.set('key', 'value', 1_000);
    await state.close();
    unregister();
    expect(heard).toEqual([]);
  });

  it('keeps counting in the window reached when the clock steps back', async () => {
    const clock = manualClock(10_500);
    const state = openMemory(clock);
    await state.addToWindow('team:search', 3, 1_000);
    clock.advance(-1_000);
    expect(await state.addToWindow('team:search', 1, 1_000)).toEqual({ current: 4, previous: 0, windowStartMs: 10_000, windowMs: 1_000 });
  });

  it('sweeps on a timer that does not keep the process alive, and close stops it', async () => {
    const timeouts = (): number => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
    const before = timeouts();
    const unreferenced = openMemory();
    expect(timeouts()).toBe(before);
    await unreferenced.close();

    // Unref'd timers are invisible to getActiveResourcesInfo, so whether close stops it is seen here.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const state = openMemory();
    expect(vi.getTimerCount()).toBe(1);
    await state.close();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects a sweep interval that is not a positive integer', () => {
    for (const invalid of [0, -1, 0.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new MemoryState({ sweepIntervalMs: invalid })).toThrow(TypeError);
    }
  });

  it('uses the system clock unless given one', async () => {
    const state = new MemoryState();
    opened.push(state);
    await state.set('key', 'value', 60_000);
    expect(await state.get('key')).toBe('value');
    const count = await state.addToWindow('team', 1, 60_000);
    expect(count.windowStartMs).toBeLessThanOrEqual(Date.now());
    expect(count.windowStartMs).toBeGreaterThan(Date.now() - 60_000);
  });
});
