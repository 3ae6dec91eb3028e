import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isLabel } from '../src/grammar.js';
import * as node from '../src/index.js';
import * as web from '../src/web.js';
import { apiToken, appToken, NOW } from './forge.js';

/**
 * Contract §14.9's property test: for random caveat sets, attenuate never widens scopes, audience,
 * networks or life, whatever the parent's facts and the clock; and the WebCrypto twin writes the
 * same bytes as the Node entry.
 */

const SCOPES = ['games:publish', 'games:read', 'tokens:read', 'apps:read', 'scores:write', 'scores:read'];
const SERVICES = ['rz-auth', 'scoreboard', 'catalogue', 'publishing-api', 'agent runner'];
const NETWORKS = ['10.0.0.0/8', '10.1.0.0/16', '192.0.2.0/24', '2001:db8::/32', '::1', '0.0.0.0/0'];

const some = <T>(items: readonly T[], min: number) => fc.subarray([...items], { minLength: min });
/** Lives mostly of minutes to hours, as children are, sometimes anything allowed. */
const life = fc.oneof(fc.integer({ min: 600, max: 86_400 }), fc.integer({ min: 1, max: 2_592_000 }));
const restrictions = fc.record({
  ttl: fc.option(life, { nil: undefined }),
  nbf: fc.option(fc.integer({ min: NOW - 1000, max: NOW + 100 }), { nil: undefined }),
  scopes: fc.option(some(SCOPES, 0), { nil: undefined }),
  aud: fc.option(some(SERVICES, 1), { nil: undefined }),
  cidrs: fc.option(some(NETWORKS, 1), { nil: undefined }),
  label: fc.option(fc.string({ minLength: 1, maxLength: 30, unit: 'grapheme' }).filter((s) => isLabel(s)), { nil: undefined }),
  rl: fc.option(fc.record({ q: fc.integer({ min: 1, max: 1_000_000 }), w: fc.integer({ min: 1, max: 86_400 }) }), { nil: undefined }),
}, { requiredKeys: [] });
const facts = fc.record({
  scopes: some(SCOPES, 0),
  expiresAt: fc.option(fc.integer({ min: NOW, max: NOW + 3_000_000 })),
  allowedCidrs: fc.option(some(NETWORKS, 0)),
  childrenRevokedBefore: fc.option(fc.integer({ min: NOW - 100, max: NOW + 10 })),
});
const clock = fc.record({
  now: fc.oneof(fc.integer({ min: NOW - 120, max: NOW + 600 }), fc.integer({ min: NOW - 120, max: NOW + 2_600_000 })),
  maxTtl: fc.oneof(fc.constant(2_592_000), fc.integer({ min: 60, max: 2_592_000 })),
});

const subset = (inner: readonly string[], outer: readonly string[]) => inner.every((item) => outer.includes(item));
const PARENT = apiToken();
const KEY = node.derivationKey(PARENT);

function rights(token: string, parent: node.ParentFacts, when: { now: number; maxTtl: number }) {
  const child = node.readChild(token);
  expect(child).not.toBeNull();
  return child && node.chainHolds(child, KEY) ? node.effectiveRights(node.summarize(child.caveats), parent, when) : null;
}

describe('attenuate, for random caveat sets', () => {
  it('never widens scopes, audience, networks or life, and the chain still holds', () => {
    let compared = 0;
    fc.assert(fc.property(restrictions, fc.array(restrictions, { minLength: 1, maxLength: 4 }), life, facts, clock,
      (first, steps, ttl, parent, when) => {
        let token = node.derive(PARENT, { ...first, ttl, now: NOW });
        for (const step of steps) {
          // The one way appending makes a refused child valid is by the rule itself: a life over the
          // server's maximum is judged on the effective exp, which a shorter appended exp lowers
          // (contract §14.5). So "before" is judged without that maximum.
          const before = rights(token, parent, { now: when.now, maxTtl: Number.MAX_SAFE_INTEGER });
          const summaryBefore = node.inspect(token);
          if (Object.values(step).every((v) => v === undefined)) continue;
          try {
            token = node.attenuate(token, { ...step, now: NOW });
          } catch (error) {
            // More than 16 caveats or 4,096 characters: refused, which widens nothing.
            expect(error).toMatchObject({ code: 'ERR_TOKEN_TOO_LARGE' });
            return;
          }
          const after = rights(token, parent, when);
          const summaryAfter = node.inspect(token);
          expect(summaryAfter.exp).toBeLessThanOrEqual(summaryBefore.exp);
          expect(summaryAfter.iat).toBe(summaryBefore.iat);
          if (summaryBefore.scopes) expect(subset(summaryAfter.scopes ?? ['unlimited'], summaryBefore.scopes)).toBe(true);
          if (summaryBefore.aud) expect(subset(summaryAfter.aud ?? ['unlimited'], summaryBefore.aud)).toBe(true);
          expect(summaryAfter.cidrs.slice(0, summaryBefore.cidrs.length)).toEqual(summaryBefore.cidrs);
          if (after === null) continue;
          // Valid after attenuating implies valid before, with at least as much.
          expect(before).not.toBeNull();
          if (before === null) return;
          compared += 1;
          expect(subset(after.scopes, before.scopes)).toBe(true);
          expect(subset(after.scopes, parent.scopes)).toBe(true);
          expect(after.exp).toBeLessThanOrEqual(before.exp);
          if (before.aud) expect(subset(after.aud ?? ['unlimited'], before.aud)).toBe(true);
          expect(after.networks.slice(0, before.networks.length)).toEqual(before.networks);
          expect(after.exp - after.iat).toBeLessThanOrEqual(when.maxTtl);
        }
      }), { numRuns: 300 });
    // Not vacuous: many runs had a valid attenuated child to compare.
    expect(compared).toBeGreaterThan(40);
  });
});

describe('the WebCrypto twin', () => {
  it('writes byte-identical children and attenuations, and checks chains the same way, for random inputs', async () => {
    const parents = [apiToken(), appToken()];
    await fc.assert(fc.asyncProperty(fc.constantFrom(...parents), restrictions, restrictions, fc.uuid(), fc.integer({ min: 0, max: 2_000_000_000 }), fc.integer({ min: 1, max: 2_592_000 }),
      async (parent, first, next, childId, now, ttl) => {
        const opts = { ...first, ttl, now, childId };
        const token = node.derive(parent, opts);
        expect(await web.derive(parent, opts)).toBe(token);
        expect(await web.parentRef(parent)).toBe(node.parentRef(parent));
        const key = node.derivationKey(parent);
        expect(await web.derivationKey(parent)).toEqual(new Uint8Array(key));
        if (Object.values(next).some((v) => v !== undefined)) {
          const narrower = node.attenuate(token, { ...next, now });
          expect(await web.attenuate(token, { ...next, now })).toBe(narrower);
          const child = node.readChild(narrower);
          expect(child && (await web.chainHolds(child, key))).toBe(true);
          expect(child && (await web.chainHolds(child, new Uint8Array(32)))).toBe(false);
        }
      }), { numRuns: 150 });
  });
});

describe('readChild on hostile text', () => {
  it('never throws, and refuses any edit of a valid child that breaks its format', () => {
    const valid = node.derive(PARENT, { ttl: 60, scopes: ['games:publish'], label: 'x' });
    fc.assert(fc.property(fc.string({ maxLength: 5000 }), (text) => {
      expect(node.readChild(text)).toBeNull();
    }));
    fc.assert(fc.property(fc.integer({ min: 0, max: valid.length - 1 }), fc.string({ minLength: 1, maxLength: 3 }), fc.integer({ min: 0, max: 3 }), (at, insert, cut) => {
      const edited = valid.slice(0, at) + insert + valid.slice(at + cut);
      const child = node.readChild(edited);
      // A checksum collision (about 1 in 2^32) may survive the format, never the chain.
      if (edited !== valid && child !== null) expect(node.chainHolds(child, KEY)).toBe(false);
    }));
  });
});
