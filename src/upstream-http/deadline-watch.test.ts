import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeadlineWatch, deadlineResolution, type WatchedCall } from './deadline-watch.js';

function call(): WatchedCall & { expired: number } {
  return {
    deadline: 0,
    listSlot: -1,
    expired: 0,
    expire() {
      this.expired += 1;
    },
  };
}

describe('DeadlineWatch', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] }));
  afterEach(() => vi.useRealTimers());

  it('expires a call once, between its deadline and one resolution later, and forgets it', () => {
    const watch = new DeadlineWatch(10);
    const late = call();
    const early = call();
    watch.watch(late, 100);
    watch.watch(early, 35);
    vi.advanceTimersByTime(30);
    expect(early.expired).toBe(0);
    vi.advanceTimersByTime(10);
    expect(early.expired).toBe(1);
    expect(late.expired).toBe(0);
    vi.advanceTimersByTime(70);
    expect(late.expired).toBe(1);
    expect(watch.size).toBe(0);
    vi.advanceTimersByTime(1_000);
    expect([early.expired, late.expired]).toEqual([1, 1]);
  });

  it('moves a deadline when watched again, and never expires an unwatched call', () => {
    const watch = new DeadlineWatch(10);
    const streaming = call();
    const finished = call();
    watch.watch(streaming, 50);
    watch.watch(finished, 50);
    vi.advanceTimersByTime(40);
    watch.unwatch(finished);
    for (let step = 0; step < 10; step++) {
      watch.watch(streaming, 50);
      vi.advanceTimersByTime(40);
    }
    expect(streaming.expired).toBe(0);
    expect(finished.expired).toBe(0);
    vi.advanceTimersByTime(20);
    expect(streaming.expired).toBe(1);
    expect(finished.expired).toBe(0);
  });

  it('sleeps while nothing is watched and wakes for the next call', () => {
    const watch = new DeadlineWatch(10);
    const first = call();
    watch.watch(first, 20);
    vi.advanceTimersByTime(30);
    expect(first.expired).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
    const second = call();
    watch.watch(second, 20);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(30);
    expect(second.expired).toBe(1);
  });
});

describe('deadlineResolution', () => {
  it('is a tenth of the shortest timeout, within 5 ms and 1 s', () => {
    expect(deadlineResolution(120_000, 300_000)).toBe(1_000);
    expect(deadlineResolution(300, 300_000)).toBe(30);
    expect(deadlineResolution(1, 1)).toBe(5);
  });
});
