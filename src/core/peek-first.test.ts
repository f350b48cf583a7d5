import { describe, expect, it } from 'vitest';
import { peekFirst } from './peek-first.js';

async function* numbers(count: number, log: string[]): AsyncGenerator<number> {
  try {
    for (let index = 0; index < count; index++) {
      log.push(`read ${index}`);
      yield index;
    }
  } finally {
    log.push('closed');
  }
}

describe('peekFirst', () => {
  it('reads only the first item, then gives it again and the rest', async () => {
    const log: string[] = [];
    const peeked = await peekFirst(numbers(3, log));
    expect(log).toEqual(['read 0']);
    expect(peeked.empty).toBe(false);
    const seen: number[] = [];
    for await (const value of peeked) seen.push(value);
    expect(seen).toEqual([0, 1, 2]);
    expect(log).toEqual(['read 0', 'read 1', 'read 2', 'closed']);
  });

  it('tells a source that ended without an item as empty', async () => {
    const log: string[] = [];
    const peeked = await peekFirst(numbers(0, log));
    expect(peeked.empty).toBe(true);
    expect(await peeked.next()).toEqual({ done: true, value: undefined });
  });

  it('closes the source when the reader stops early', async () => {
    const log: string[] = [];
    const peeked = await peekFirst(numbers(5, log));
    for await (const value of peeked) if (value === 1) break;
    expect(log).toEqual(['read 0', 'read 1', 'closed']);
  });

  it('closes the source when it stops before reading the first item again', async () => {
    const log: string[] = [];
    const peeked = await peekFirst(numbers(5, log));
    await peeked.return();
    expect(log).toEqual(['read 0', 'closed']);
    expect(await peeked.next()).toEqual({ done: true, value: undefined });
  });

  it('passes on a failure of the first read', async () => {
    async function* failing(): AsyncGenerator<number> {
      yield* [];
      throw new Error('refused');
    }
    await expect(peekFirst(failing())).rejects.toThrow('refused');
  });
});
