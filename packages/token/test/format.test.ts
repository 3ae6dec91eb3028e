import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checksum, fromBase64url, toBase64url } from '../src/bytes.js';
import { attenuate, chainHolds, derivationKey, derive, inspect, parentRef, readChild, TokenError } from '../src/index.js';
import { apiToken, appToken, bodyOf, forge, keyOf, NOW, refOf, withChecksum } from './forge.js';

/** Contract §14.4: the layout, the checksum and the parent's reference, checked against node:crypto and node:zlib. */

const ID = '0b7e4a7c-9f45-4d2a-8f6e-1c2d3e4f5a6b';

describe('the bytes of the format', () => {
  it('base64url and the checksum agree with Buffer and zlib for any input', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
      const text = Buffer.from(bytes).toString('base64url');
      expect(toBase64url(bytes)).toBe(text);
      expect(fromBase64url(text)).toEqual(bytes);
      expect('rzd_' + text + checksum('rzd_' + text)).toBe(withChecksum('rzd_' + text));
    }));
  });

  it('only the canonical base64url text of a body is read: padding, a stray bit, a 1-mod-4 length or another alphabet is refused', () => {
    expect(fromBase64url('AQ')).toEqual(new Uint8Array([1]));
    for (const odd of ['AR', 'AQ==', 'AQ=', 'A', 'AQJ', 'AQ+/', 'AQ/_', 'A Q', 'AQ\n', 'AQé']) expect(fromBase64url(odd), odd).toBeNull();
    expect(fromBase64url('AQI')).toEqual(new Uint8Array([1, 2]));
  });
});

describe('derive', () => {
  it('writes version 1, the parent reference, the child id, n framed caveats and a 32-byte tag, under the house checksum', () => {
    const parent = apiToken();
    const child = derive(parent, { ttl: '15m', scopes: ['games:publish'], aud: ['publishing-api'], label: 'ci run 4411', now: NOW, childId: ID });
    expect(child).toMatch(/^rzd_[A-Za-z0-9_-]{140,4092}$/);
    expect(withChecksum(child.slice(0, -6))).toBe(child);
    const body = bodyOf(child);
    expect(body[0]).toBe(1);
    expect(body.subarray(1, 17)).toEqual(refOf(parent));
    expect(body.subarray(17, 33).toString('hex')).toBe(ID.replaceAll('-', ''));
    expect(body[33]).toBe(5);
    expect(body.subarray(34, 36).readUInt16BE()).toBe('{"iat":1800000000}'.length);
    expect(body.subarray(36, 36 + 18).toString()).toBe('{"iat":1800000000}');
    expect(inspect(child)).toMatchObject({ parentRef: refOf(parent).toString('hex'), childId: ID, iat: NOW, exp: NOW + 900, scopes: ['games:publish'], aud: ['publishing-api'], labels: ['ci run 4411'] });
    // A typical child with five caveats is about 290 characters (contract §14.4).
    expect(child.length).toBeLessThan(300);
  });

  it('uses the parent reference and derivation key of contract §14.3 and §14.4 (HMAC of the value, not of its digest)', () => {
    const parent = appToken();
    expect(parentRef(parent)).toBe(refOf(parent).toString('hex'));
    expect(Buffer.from(derivationKey(parent))).toEqual(keyOf(parent));
    const child = readChild(derive(parent, { ttl: 60 }));
    expect(child && chainHolds(child, derivationKey(parent))).toBe(true);
  });

  it('gives every child a new random version 4 id', () => {
    const parent = apiToken();
    const ids = new Set(Array.from({ length: 200 }, () => inspect(derive(parent, { ttl: 60 })).childId));
    expect(ids.size).toBe(200);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('refuses a parent that is not an rz_ or rza_ token with a valid checksum, and never echoes it', () => {
    const good = apiToken();
    const flipped = good.slice(0, 10) + (good[10] === 'a' ? 'b' : 'a') + good.slice(11);
    const bad = [flipped, good.replace('rz_', 'rza_'), good.replace('rz_', 'rzs_'), `${good} `, good.toUpperCase(), '', 'rz_', `rzd_${good}`];
    for (const parent of bad) {
      const error = (() => { try { derive(parent, { ttl: 60 }); } catch (e) { return e; } })();
      expect(error).toBeInstanceOf(TokenError);
      expect((error as TokenError).code).toBe('ERR_PARENT_MALFORMED');
      expect((error as Error).message).not.toContain(good.slice(3, 20));
    }
  });

  it('checks each option against the caveat grammar and names the one at fault', () => {
    const parent = apiToken();
    const cases: [string, object][] = [
      ['ttl', { ttl: 0 }], ['ttl', { ttl: 2_592_001 }], ['ttl', { ttl: '15x' }], ['ttl', { ttl: 1.5 }], ['ttl', { ttl: '031d' }],
      ['scopes', { ttl: 60, scopes: ['Games:publish'] }], ['scopes', { ttl: 60, scopes: Array(51).fill('a:b') }],
      ['aud', { ttl: 60, aud: [] }], ['aud', { ttl: 60, aud: [' padded'] }],
      ['cidrs', { ttl: 60, cidrs: ['10.0.0.0/33'] }], ['cidrs', { ttl: 60, cidrs: ['fe80::1%eth0'] }],
      ['label', { ttl: 60, label: 'a\u0007b' }], ['label', { ttl: 60, label: 'x'.repeat(101) }],
      ['rl', { ttl: 60, rl: { q: 0, w: 60 } }], ['rl', { ttl: 60, rl: { q: 5, w: 86_401 } }], ['rl', { ttl: 60, rl: { q: 5, w: 60, x: 1 } }],
      ['nbf', { ttl: 60, nbf: -1 }], ['childId', { ttl: 60, childId: 'nope' }],
    ];
    for (const [option, opts] of cases) {
      expect(() => derive(parent, opts as never), JSON.stringify(opts)).toThrow(expect.objectContaining({ code: 'ERR_OPTION_INVALID', option }));
    }
    expect(inspect(derive(parent, { ttl: '30d', now: NOW })).exp).toBe(NOW + 2_592_000);
  });
});

describe('attenuate', () => {
  it('appends caveats and keeps the parent reference and child id; the chain still holds', () => {
    const parent = apiToken();
    const child = derive(parent, { ttl: '1h', now: NOW, childId: ID });
    const narrower = attenuate(child, { ttl: 60, aud: ['scoreboard'], now: NOW });
    const read = readChild(narrower);
    expect(read?.caveats.map((c) => c.type)).toEqual(['iat', 'exp', 'exp', 'aud']);
    expect(read && chainHolds(read, derivationKey(parent))).toBe(true);
    expect(inspect(narrower)).toMatchObject({ childId: ID, parentRef: parentRef(parent), exp: NOW + 60, aud: ['scoreboard'] });
  });

  it('refuses a malformed child, no restriction at all, and a 17th caveat', () => {
    const child = derive(apiToken(), { ttl: 60 });
    expect(() => attenuate(child.slice(0, -1), { ttl: 30 })).toThrow(expect.objectContaining({ code: 'ERR_TOKEN_MALFORMED' }));
    expect(() => attenuate(child, {})).toThrow(expect.objectContaining({ code: 'ERR_OPTION_INVALID' }));
    let longer = child;
    for (let i = 2; i < 16; i++) longer = attenuate(longer, { label: `step ${i}` });
    expect(readChild(longer)?.caveats).toHaveLength(16);
    expect(() => attenuate(longer, { label: 'one too many' })).toThrow(expect.objectContaining({ code: 'ERR_TOKEN_TOO_LARGE' }));
  });

  it('reads only the framing: a child with a caveat outside the grammar is attenuated and stays refused', () => {
    const parent = apiToken();
    const bad = forge({ parent, caveats: ['{"iat":1800000000}', '{"exp":1800000900}', '{"sub":"x"}'] });
    const appended = attenuate(bad, { ttl: 60, now: NOW });
    expect(readChild(bad)).toBeNull();
    expect(readChild(appended)).toBeNull();
  });

  it('stops at 4,096 characters', () => {
    let child = derive(apiToken(), { ttl: 60, label: 'x'.repeat(100) });
    const big = { scopes: Array.from({ length: 12 }, (_, i) => `s${i}:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa`) };
    let refusal: unknown;
    for (let i = 0; i < 14 && refusal === undefined; i++) {
      try {
        child = attenuate(child, big);
      } catch (error) {
        refusal = error;
      }
    }
    expect(refusal).toMatchObject({ code: 'ERR_TOKEN_TOO_LARGE' });
    expect(child.length).toBeLessThanOrEqual(4096);
    expect(child.length + 600).toBeGreaterThan(4096);
    expect(readChild(child)?.caveats.length).toBeLessThan(16);
    const tooBig = { scopes: Array.from({ length: 15 }, (_, i) => `s${i}:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa`) };
    expect(() => attenuate(derive(apiToken(), { ttl: 60 }), tooBig)).toThrow(expect.objectContaining({ code: 'ERR_OPTION_INVALID', option: 'scopes' }));
  });
});
