import { describe, expect, it } from 'vitest';
import { BoundedMap } from '../../src/lib/bounded-map.js';

describe('BoundedMap', () => {
  it('evicts the oldest entry past its cap and tells onEvict, and only then', () => {
    const evicted: [string, number][] = [];
    const map = new BoundedMap<string, number>(2, (key, value) => evicted.push([key, value]));
    map.set('a', 1).set('b', 2);
    map.set('a', 10); // an update: no eviction, and 'a' keeps its place
    map.delete('b'); // a delete is not an eviction
    map.set('c', 3);
    expect(evicted).toEqual([]);
    map.set('d', 4);
    expect(evicted).toEqual([['a', 10]]);
    expect([...map]).toEqual([
      ['c', 3],
      ['d', 4],
    ]);
  });

  it('keeps an index beside it the same size as the map however many keys pass through', () => {
    const byValue = new Map<number, string>();
    const map = new BoundedMap<string, number>(100, (_key, value) => byValue.delete(value));
    for (let i = 0; i < 10_000; i++) {
      map.set(`key-${i}`, i);
      byValue.set(i, `key-${i}`);
    }
    expect(map.size).toBe(100);
    expect(byValue.size).toBe(100);
    expect([...byValue.keys()]).toEqual([...map.values()]);
  });
});
