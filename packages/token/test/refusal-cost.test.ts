import { describe, expect, it } from 'vitest';
import { attenuate, chainHolds, derivationKey, derive, effectiveRights, type ParentFacts, readChild, summarize } from '../src/index.js';
import { apiToken, forge, NOW, withChecksum } from './forge.js';

/**
 * Contract §14.9, grammar: the oversize and malformed cases cost less than a valid verification
 * (p99 of the refusals below p50 of the valid ones), and refusing is linear in the input, bounded
 * by the 4,096-character check that comes first. Measured as CPU time per batch of calls, which a
 * shared machine's other work hardly moves (wall time would count the time this process waits).
 */

const parent = apiToken();
const key = derivationKey(parent);
const FACTS: ParentFacts = { scopes: ['games:publish', 'tokens:read'], expiresAt: null, allowedCidrs: null, childrenRevokedBefore: null };
const valid = derive(parent, { ttl: '15m', scopes: ['games:publish'], aud: ['publishing-api'], label: 'ci run 4411', now: NOW });

/** What the server runs for a child before its lookups: the format, the chain, the rights. */
function verify(token: string): boolean {
  const child = readChild(token);
  return child !== null && chainHolds(child, key) && effectiveRights(summarize(child.caveats), FACTS, { now: NOW + 1, maxTtl: 604_800 }) !== null;
}

/**
 * Batches long enough (milliseconds) that the garbage collections each one's allocations cause
 * are counted in it on average: a valid verification allocates more than a refusal, so a short
 * batch that happens to hold a collection would charge a refusal with what others' garbage cost.
 */
const BATCH = 400;
/** CPU microseconds per call, one sample per batch. */
function samples(run: () => void, count: number, batch = BATCH): number[] {
  const out: number[] = [];
  for (let s = 0; s < count; s++) {
    const start = process.cpuUsage();
    for (let i = 0; i < batch; i++) run();
    const used = process.cpuUsage(start);
    out.push((used.user + used.system) / batch);
  }
  return out.sort((a, b) => a - b);
}
const quantile = (sorted: readonly number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

const x = (n: number) => 'x'.repeat(n);
/** `length` characters: the valid child's prefix and first 48 characters, then filler. */
const head = (length: number) => valid.slice(0, 52).padEnd(length, 'A');
const IAT = '{"iat":1800000000}';
const EXP = '{"exp":1800000900}';
const REFUSED: Record<string, string> = {
  '4,097 characters': withChecksum(`rzd_${'A'.repeat(4087)}`),
  '17 caveats': forge({ parent, caveats: [IAT, EXP, ...Array(15).fill(`{"label":"${x(30)}"}`)] }),
  'a 513-byte caveat': forge({ parent, caveats: [IAT, EXP, `{"label":"${x(501)}"}`] }),
  'a wrong version': withChecksum(`rzd_A${'A'.repeat(200)}`),
};

/** The longest valid child: 16 caveats, close to 4,096 characters. */
const validLong = (() => {
  const scopes = Array.from({ length: 12 }, (_, i) => `s${i}:${x(31)}`);
  let token = derive(parent, { ttl: '15m', aud: ['publishing-api'], now: NOW });
  for (const more of [{ scopes }, { label: x(100) }]) {
    for (;;) {
      try {
        token = attenuate(token, { ...more, now: NOW });
      } catch {
        break;
      }
    }
  }
  return token;
})();

/** A valid child's first 48 characters (version 1, n = 5) then filler: refusals that read every character. */
const FULL_LENGTH: Record<string, string> = {
  'a bad character at the end': `${head(4089)}!${'A'.repeat(6)}`,
  'a bad checksum': `${head(4090)}${valid.slice(-6) === 'zzzzzz' ? 'yyyyyy' : 'zzzzzz'}`,
  'a valid checksum but no caveat framing': withChecksum(head(4090)),
};

describe('refusing a malformed child', () => {
  it('refuses every case here (positive control: the valid one verifies)', () => {
    expect(verify(valid)).toBe(true);
    for (const [name, token] of Object.entries(REFUSED)) expect(readChild(token), name).toBeNull();
    expect(verify(validLong)).toBe(true);
    expect(validLong.length).toBeGreaterThan(3500);
    for (const [name, token] of Object.entries(FULL_LENGTH)) {
      expect(token, name).toHaveLength(4096);
      expect(readChild(token), name).toBeNull();
    }
  });

  /** Whether each refusal's p99 is below the p50 of verifying `validToken`. */
  function cheaper(refused: Record<string, string>, validToken: string, validBatch: number): void {
    for (let i = 0; i < 300; i++) {
      verify(validToken);
      for (const token of Object.values(refused)) readChild(token);
    }
    const typical = quantile(samples(() => verify(validToken), 30, validBatch), 0.5);
    for (const [name, token] of Object.entries(refused)) {
      const worst = quantile(samples(() => readChild(token), 30), 0.99);
      expect(worst, `${name}: p99 ${worst} µs against a valid verification's p50 ${typical} µs`).toBeLessThan(typical);
    }
  }

  it('oversize or malformed costs less than verifying a typical valid child: p99 of each refusal below p50 of the valid one', () => {
    cheaper(REFUSED, valid, BATCH);
  });

  it('is linear: a refusal that reads all 4,096 characters costs less than verifying a valid child as long', () => {
    cheaper(FULL_LENGTH, validLong, BATCH / 8);
  });

  it('is bounded by the length check: 10 MB costs no more than 4,097 characters', () => {
    const huge = `rzd_${'A'.repeat(10_000_000)}`;
    expect(readChild(huge)).toBeNull();
    const big = quantile(samples(() => readChild(huge), 20), 0.5);
    const small = quantile(samples(() => readChild(REFUSED['4,097 characters']), 20), 0.5);
    expect(big).toBeLessThan(small + 1);
  });
});
