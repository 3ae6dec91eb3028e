import { describe, expect, it } from 'vitest';
import { chainHolds, derivationKey, derive, readChild } from '../src/index.js';
import { tokenDigest } from '../../../src/lib/token-format.js';
import { apiToken, bodyOf, forge, hmac, NOW, tokenOf } from './forge.js';

/**
 * Contract §14.9, integrity: any change to a child's bytes fails its chain (or its format), and a
 * key made from anything but the parent's value signs nothing the parent's key accepts.
 */

const parent = apiToken();
const key = derivationKey(parent);
const CAVEATS = ['{"iat":1800000000}', '{"exp":1800000900}', '{"scopes":["games:publish"]}', '{"aud":["publishing-api"]}', '{"label":"ci run 4411"}'];

/** Whether the token passes the format and its chain: what the server accepts before the parent's facts. */
const holds = (token: string): boolean => {
  const child = readChild(token);
  return child !== null && chainHolds(child, key);
};

describe('a child of the right parent', () => {
  it('holds, whether the package or the independent forge wrote it (positive control)', () => {
    expect(holds(forge({ parent, caveats: CAVEATS }))).toBe(true);
    expect(holds(derive(parent, { ttl: 60, now: NOW }))).toBe(true);
  });
});

describe('a changed child', () => {
  const original = bodyOf(forge({ parent, caveats: CAVEATS }));

  it('fails with any bit of any byte of its body flipped, even under a recomputed checksum', () => {
    for (let i = 0; i < original.length; i++) {
      for (const bit of [0x01, 0x80]) {
        const body = Buffer.from(original);
        body[i] = (body[i] ?? 0) ^ bit;
        expect(holds(tokenOf(body)), `byte ${i} ^ ${bit}`).toBe(false);
      }
    }
  });

  it('fails with its last caveat dropped, a middle one dropped, two reordered, or its child id or parent reference changed', () => {
    const variants = [
      forge({ parent, caveats: CAVEATS.slice(0, -1), key: Buffer.alloc(32) }),
      forge({ parent, caveats: [CAVEATS[0] ?? '', ...CAVEATS.slice(2)], key: Buffer.alloc(32) }),
    ];
    // Built from the original's own tag, as an attacker holding only the child would.
    const { tag } = readChild(tokenOf(original)) ?? { tag: new Uint8Array() };
    const reframe = (caveats: string[], childId = original.subarray(17, 33), ref = original.subarray(1, 17)): string => {
      const framed = caveats.map((c) => Buffer.concat([Buffer.from([0, c.length]), Buffer.from(c)]));
      return tokenOf(Buffer.concat([Buffer.from([1]), ref, childId, Buffer.from([caveats.length]), ...framed, tag]));
    };
    variants.push(
      reframe(CAVEATS.slice(0, -1)),
      reframe([CAVEATS[0] ?? '', ...CAVEATS.slice(2)]),
      reframe([CAVEATS[0] ?? '', CAVEATS[2] ?? '', CAVEATS[1] ?? '', ...CAVEATS.slice(3)]),
      reframe(CAVEATS, Buffer.alloc(16, 7)),
      reframe(CAVEATS, undefined, Buffer.alloc(16, 9)),
    );
    expect(holds(reframe(CAVEATS))).toBe(true);
    for (const variant of variants) expect(holds(variant)).toBe(false);
  });

  it('made with a key derived from the parent\'s stored digest instead of its value fails (the database-leak forgery)', () => {
    const digest = tokenDigest(parent);
    for (const forgedKey of [hmac(digest, 'rz-derive-v1'), hmac(Buffer.from(digest, 'hex'), 'rz-derive-v1'), Buffer.from(digest, 'hex')]) {
      expect(holds(forge({ parent, caveats: CAVEATS, key: forgedKey }))).toBe(false);
    }
  });

  it('of another parent fails under this parent\'s key', () => {
    expect(holds(derive(apiToken(), { ttl: 60 }))).toBe(false);
  });
});
