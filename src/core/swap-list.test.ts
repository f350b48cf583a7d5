import { describe, expect, it } from 'vitest';
import { SwapList } from './swap-list.js';

interface Item {
  name: string;
  listSlot: number;
}

const item = (name: string): Item => ({ name, listSlot: -1 });
const names = (list: SwapList<Item>) => list.values().map((entry) => entry.name);

describe('SwapList', () => {
  it('holds what was added until it is removed, each item once', () => {
    const list = new SwapList<Item>();
    const [a, b, c] = [item('a'), item('b'), item('c')];
    list.add(a);
    list.add(b);
    list.add(c);
    list.add(b);
    expect(list.size).toBe(3);
    expect(names(list).sort()).toEqual(['a', 'b', 'c']);

    expect(list.remove(a)).toBe(true);
    expect(names(list).sort()).toEqual(['b', 'c']);
    expect(a.listSlot).toBe(-1);
    expect(list.remove(a)).toBe(false);
    expect(list.size).toBe(2);
  });

  it('keeps every remaining item findable at its slot after removals from the middle, the end and the start', () => {
    const list = new SwapList<Item>();
    const items = Array.from({ length: 6 }, (_, index) => item(String(index)));
    for (const entry of items) list.add(entry);
    for (const gone of [items[2], items[5], items[0]] as Item[]) list.remove(gone);
    expect(names(list).sort()).toEqual(['1', '3', '4']);
    for (let slot = 0; slot < list.size; slot++) expect(list.at(slot)?.listSlot).toBe(slot);
    expect(list.find((entry) => entry.name === '4')).toBe(items[4]);
    expect(list.find((entry) => entry.name === '2')).toBeUndefined();
  });

  it('refuses to remove an item another list holds at the same slot', () => {
    const first = new SwapList<Item>();
    const second = new SwapList<Item>();
    const [a, b] = [item('a'), item('b')];
    first.add(a);
    second.add(b);
    expect(second.remove(a)).toBe(false);
    expect(names(second)).toEqual(['b']);
    expect(a.listSlot).toBe(0);
  });

  it('lets a backwards walk remove the item at hand', () => {
    const list = new SwapList<Item>();
    const items = Array.from({ length: 5 }, (_, index) => item(String(index)));
    for (const entry of items) list.add(entry);
    const seen: string[] = [];
    for (let slot = list.size - 1; slot >= 0; slot--) {
      const entry = list.at(slot) as Item;
      seen.push(entry.name);
      if (Number(entry.name) % 2 === 0) list.remove(entry);
    }
    expect(seen.sort()).toEqual(['0', '1', '2', '3', '4']);
    expect(names(list).sort()).toEqual(['1', '3']);
  });

  it('gives a copy of its items, which adding and removing leave as it was', () => {
    const list = new SwapList<Item>();
    const [a, b] = [item('a'), item('b')];
    list.add(a);
    const copy = list.values();
    list.add(b);
    list.remove(a);
    expect(copy.map((entry) => entry.name)).toEqual(['a']);
  });
});
