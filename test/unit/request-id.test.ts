import { describe, expect, it } from 'vitest';
import { isUuid, requestId } from '../../src/lib/ids.js';

/** More than three batches of 128, so ids from several draws of randomness are compared. */
const COUNT = 400;
const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('requestId', () => {
  const ids = Array.from({ length: COUNT }, () => requestId());

  it('makes lower-case version 4 UUIDs with the RFC 9562 variant', () => {
    for (const id of ids) {
      expect(id).toMatch(V4);
      expect(isUuid(id)).toBe(true);
    }
  });

  it('never repeats an id, within a batch or across batches', () => {
    expect(new Set(ids).size).toBe(COUNT);
  });

  it('draws every random digit: each of the 30 random hex positions takes many values', () => {
    // The version digit (14) is fixed and the variant digit (19) has four values; every other
    // position takes each of its 16 values with probability 1/16, so 400 ids show nearly all of them.
    for (let position = 0; position < 36; position++) {
      if ([8, 13, 14, 18, 19, 23].includes(position)) continue;
      const seen = new Set(ids.map((id) => id[position]));
      expect(seen.size, `position ${position}`).toBeGreaterThanOrEqual(12);
    }
    expect(new Set(ids.map((id) => id[19])).size).toBe(4);
  });

  it('gives ids that stay as they were when later batches are made', () => {
    const first = requestId();
    const copy = `${first}`.split('').join('');
    for (let i = 0; i < 3 * 128; i++) requestId();
    expect(first).toBe(copy);
  });
});
