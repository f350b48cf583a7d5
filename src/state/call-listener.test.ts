import { afterEach, describe, expect, it, vi } from 'vitest';
import { callListener } from './call-listener.js';

describe('callListener', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('calls the listener with the value', () => {
    const heard: string[] = [];
    callListener((message: string) => heard.push(message), 'message');
    expect(heard).toEqual(['message']);
  });

  it('keeps an error the listener throws from its caller, and throws it again on its own', () => {
    const queued: Array<() => void> = [];
    vi.spyOn(globalThis, 'queueMicrotask').mockImplementation((callback) => {
      queued.push(callback);
    });
    const bug = new Error('listener bug');
    expect(() =>
      callListener(() => {
        throw bug;
      }, 'message'),
    ).not.toThrow();
    expect(queued).toHaveLength(1);
    expect(() => queued[0]?.()).toThrow(bug);
  });
});
