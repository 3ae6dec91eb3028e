import { describe, expect, it } from 'vitest';
import { SortedStrings } from '../../src/lib/sorted-strings.js';

describe('SortedStrings', () => {
  it('finds exactly its entries: first, last, prefixes and extensions of entries are told apart', () => {
    const entries = ['ab', 'abc', 'abd', 'b', 'zz', 'a'];
    const set = new SortedStrings(entries);
    for (const entry of entries) expect(set.has(entry), entry).toBe(true);
    for (const other of ['', 'aa', 'abcd', 'abb', 'ba', 'z', 'zzz', 'A', '0', '~']) expect(set.has(other), other).toBe(false);
  });

  it('keeps one of each entry, in code-unit order, and iterates them', () => {
    const set = new SortedStrings(['pear', 'apple', 'pear', 'Äpfel', 'zebra', '日本', 'apple']);
    expect(set.size).toBe(5);
    expect([...set]).toEqual(['apple', 'pear', 'zebra', 'Äpfel', '日本']);
    expect(set.has('Äpfel')).toBe(true);
    expect(set.has('日本')).toBe(true);
    expect(set.has('日')).toBe(false);
  });

  it('agrees with a Set on many entries and many misses', () => {
    const entries = Array.from({ length: 5000 }, (_, i) => (i * 7919).toString(36));
    const set = new SortedStrings(entries);
    const reference = new Set(entries);
    expect(set.size).toBe(reference.size);
    for (let i = 0; i < 20_000; i++) {
      const probe = (i * 104_729).toString(36).slice(0, 1 + (i % 4));
      expect(set.has(probe), probe).toBe(reference.has(probe));
    }
  });

  it('is empty without entries', () => {
    const set = new SortedStrings([]);
    expect(set.size).toBe(0);
    expect(set.has('')).toBe(false);
    expect([...set]).toEqual([]);
  });
});
