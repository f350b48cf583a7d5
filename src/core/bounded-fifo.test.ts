import { describe, expect, it } from 'vitest';
import { BoundedFifo } from './bounded-fifo.js';

describe('BoundedFifo', () => {
  it('keeps the newest items up to its capacity, oldest first, and says what it dropped', () => {
    const fifo = new BoundedFifo<number>(3);
    expect([1, 2, 3].map((item) => fifo.push(item))).toEqual([0, 0, 0]);
    expect(fifo.push(4)).toBe(1);
    expect(fifo.size).toBe(3);
    expect(fifo.peek(10)).toEqual([2, 3, 4]);
    fifo.drop(2);
    expect(fifo.peek(10)).toEqual([4]);
    fifo.drop(5);
    expect(fifo.size).toBe(0);
    expect(fifo.peek(1)).toEqual([]);
  });

  it('keeps its order across many pushes, drops and compactions', () => {
    const fifo = new BoundedFifo<number>(5_000);
    let next = 0;
    let oldest = 0;
    for (let round = 0; round < 50; round++) {
      for (let push = 0; push < 700; push++) oldest += fifo.push(next++);
      const taken = fifo.peek(300);
      expect(taken[0]).toBe(oldest);
      expect(taken.every((item, index) => item === oldest + index)).toBe(true);
      fifo.drop(300);
      oldest += taken.length;
    }
    expect(fifo.size).toBe(next - oldest);
    expect(fifo.peek(fifo.size)).toEqual(Array.from({ length: next - oldest }, (_, index) => oldest + index));
  });
});
