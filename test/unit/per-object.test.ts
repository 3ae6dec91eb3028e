import { describe, expect, it } from 'vitest';
import { perObject } from '../../src/lib/per-object.js';

describe('perObject', () => {
  it('builds once per object, and separately for each object', () => {
    let builds = 0;
    const nameOf = perObject((o: { id: number }) => {
      builds++;
      return `n${o.id}`;
    });
    const a = { id: 1 };
    const b = { id: 1 };
    expect([nameOf(a), nameOf(a), nameOf(b), nameOf(a)]).toEqual(['n1', 'n1', 'n1', 'n1']);
    expect(builds).toBe(2);
  });
});
