import { describe, expect, it } from 'vitest';
import { attenuate, derive, effectiveRights, type ParentFacts, readChild, summarize } from '../src/index.js';
import { apiToken, forge, NOW } from './forge.js';

/**
 * Contract §14.5 and §14.9, widening attempts: what a child may do is the parent's current rights
 * narrowed by every caveat; appending never gives back what an earlier caveat took.
 */

const parent = apiToken();
const FACTS: ParentFacts = { scopes: ['games:publish', 'tokens:read', 'apps:read'], expiresAt: null, allowedCidrs: null, childrenRevokedBefore: null };
const WEEK = 604_800;
const at = (now = NOW + 10, maxTtl = WEEK) => ({ now, maxTtl });

const rightsOf = (token: string, facts: ParentFacts = FACTS, when = at()) => {
  const child = readChild(token);
  if (child === null) throw new Error('malformed');
  return effectiveRights(summarize(child.caveats), facts, when);
};
const base = (opts: object = {}) => derive(parent, { ttl: '1h', now: NOW, ...opts });

describe('effective rights', () => {
  it('a child without restrictions has the parent\'s current scopes and the child\'s life (positive control)', () => {
    expect(rightsOf(base())).toMatchObject({ iat: NOW, exp: NOW + 3600, scopes: FACTS.scopes, aud: undefined, networks: [] });
  });

  it('follow the parent: narrowing its scopes narrows the child, its expiry caps the child\'s', () => {
    const child = base({ scopes: ['games:publish', 'tokens:read'] });
    expect(rightsOf(child)?.scopes).toEqual(['games:publish', 'tokens:read']);
    expect(rightsOf(child, { ...FACTS, scopes: ['tokens:read'] })?.scopes).toEqual(['tokens:read']);
    expect(rightsOf(child, { ...FACTS, expiresAt: NOW + 100 })?.exp).toBe(NOW + 100);
    expect(rightsOf(child, { ...FACTS, expiresAt: NOW + 100 }, at(NOW + 100))).toBeNull();
  });

  it('an appended scope the parent lacks, or one outside every earlier scopes caveat, is not granted', () => {
    const child = attenuate(base({ scopes: ['tokens:read'] }), { scopes: ['tokens:read', 'tokens:write', 'games:publish'], now: NOW });
    expect(rightsOf(child)?.scopes).toEqual(['tokens:read']);
    expect(rightsOf(base({ scopes: ['tokens:write', 'admin:all'] }))?.scopes).toEqual([]);
  });

  it('an appended later exp is ignored: the earlier stands', () => {
    const child = attenuate(base({ ttl: 60 }), { ttl: '7d', now: NOW });
    expect(rightsOf(child)?.exp).toBe(NOW + 60);
    expect(rightsOf(child, FACTS, at(NOW + 60))).toBeNull();
  });

  it('an appended iat earlier than the first is ignored', () => {
    const child = forge({ parent, caveats: ['{"iat":1800000000}', '{"exp":1800003600}', '{"iat":1700000000}'] });
    expect(rightsOf(child)?.iat).toBe(NOW);
    expect(rightsOf(child, { ...FACTS, childrenRevokedBefore: NOW + 1 })).toBeNull();
  });

  it('a life over the maximum is invalid, at the maximum valid; a later, larger exp does not count', () => {
    expect(rightsOf(base({ ttl: WEEK }))).not.toBeNull();
    expect(rightsOf(base({ ttl: WEEK + 1 }))).toBeNull();
    expect(rightsOf(base({ ttl: '1h' }), FACTS, at(NOW + 10, 3599))).toBeNull();
    expect(rightsOf(attenuate(base({ ttl: 60 }), { ttl: '30d', now: NOW }))).not.toBeNull();
  });

  it('iat up to 60 s ahead of the clock is taken, 61 s is not', () => {
    expect(rightsOf(base(), FACTS, at(NOW - 60))).not.toBeNull();
    expect(rightsOf(base(), FACTS, at(NOW - 61))).toBeNull();
  });

  it('nbf holds until its time; revoke-all kills children issued before it, not after', () => {
    const later = base({ nbf: NOW + 100 });
    expect(rightsOf(later, FACTS, at(NOW + 99))).toBeNull();
    expect(rightsOf(later, FACTS, at(NOW + 100))).not.toBeNull();
    expect(rightsOf(base(), { ...FACTS, childrenRevokedBefore: NOW + 1 })).toBeNull();
    expect(rightsOf(base(), { ...FACTS, childrenRevokedBefore: NOW })).not.toBeNull();
  });

  it('an aud list appended after another gives the intersection, possibly nobody', () => {
    const child = attenuate(base({ aud: ['scoreboard', 'catalogue'] }), { aud: ['catalogue', 'publishing-api'], now: NOW });
    expect(rightsOf(child)?.aud).toEqual(['catalogue']);
    expect(rightsOf(attenuate(child, { aud: ['scoreboard'], now: NOW }))?.aud).toEqual([]);
  });

  it('networks: the parent\'s allow-list and every cidrs caveat must all hold the client', () => {
    const child = attenuate(base({ cidrs: ['10.0.0.0/8'] }), { cidrs: ['10.1.0.0/16', '192.0.2.0/24'], now: NOW });
    expect(rightsOf(child, { ...FACTS, allowedCidrs: ['10.0.0.0/12'] })?.networks).toEqual([['10.0.0.0/12'], ['10.0.0.0/8'], ['10.1.0.0/16', '192.0.2.0/24']]);
    expect(rightsOf(child, { ...FACTS, allowedCidrs: [] })?.networks).toEqual([['10.0.0.0/8'], ['10.1.0.0/16', '192.0.2.0/24']]);
  });

  it('labels and rate limits accumulate in order', () => {
    const child = attenuate(base({ label: 'ci run 4411', rl: { q: 60, w: 60 } }), { label: 'test agent', rl: { q: 5, w: 60 }, now: NOW });
    expect(rightsOf(child)).toMatchObject({ labels: ['ci run 4411', 'test agent'], rl: [{ q: 60, w: 60 }, { q: 5, w: 60 }] });
  });
});
