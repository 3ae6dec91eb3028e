import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { generateToken, tokenDigest, tokenHint, tokenKind } from '../../src/lib/token-format.js';
import { flip } from '../helpers/api.js';

describe('token format', () => {
  it.each([
    ['api', /^rz_[0-9A-Za-z]{43}[0-9A-Za-z]{6}$/],
    ['app', /^rza_[0-9A-Za-z]{43}[0-9A-Za-z]{6}$/],
    ['service', /^rzs_[0-9A-Za-z]{43}[0-9A-Za-z]{6}$/],
  ] as const)('%s tokens: prefix + 43 base62 + 6 base62 checksum, recognised offline', (kind, shape) => {
    const token = generateToken(kind);
    expect(token).toMatch(shape);
    expect(tokenKind(token)).toBe(kind);
  });

  it('the checksum is the base62 CRC32 of prefix + body', () => {
    const token = generateToken('api');
    const head = token.slice(0, -6);
    const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    let n = crc32(head);
    let expected = '';
    for (let i = 0; i < 6; i++) {
      expected = alphabet[n % 62] + expected;
      n = Math.floor(n / 62);
    }
    expect(token.slice(-6)).toBe(expected);
  });

  it('rejects relabelled, altered, truncated and padded tokens', () => {
    const api = generateToken('api');
    const app = generateToken('app');
    expect(tokenKind(`rza_${api.slice(3)}`)).toBeNull();
    expect(tokenKind(`rz_${app.slice(4)}`)).toBeNull();
    const service = generateToken('service');
    expect(tokenKind(`rzs_${app.slice(4)}`)).toBeNull();
    expect(tokenKind(`rza_${service.slice(4)}`)).toBeNull();
    expect(tokenKind(flip(service, 20))).toBeNull();
    expect(tokenKind(flip(api, 10))).toBeNull();
    expect(tokenKind(api.slice(0, -1))).toBeNull();
    expect(tokenKind(`${api}a`)).toBeNull();
    expect(tokenKind(` ${api}`)).toBeNull();
    expect(tokenKind(api.toUpperCase())).toBeNull();
    expect(tokenKind('')).toBeNull();
  });

  it('carries at least 256 bits: values do not repeat and every base62 character appears', () => {
    const seen = new Set<string>();
    const chars = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const body = generateToken('api').slice(3, 46);
      seen.add(body);
      for (const c of body) chars.add(c);
    }
    expect(seen.size).toBe(2000);
    expect(chars.size).toBe(62);
    expect(43 * Math.log2(62)).toBeGreaterThanOrEqual(256);
  });

  it('digest is hex SHA-256; hint is the prefix and the last four characters', () => {
    const token = generateToken('app');
    expect(tokenDigest(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(tokenHint(token, 'app')).toBe(`rza_${token.slice(-4)}`);
  });
});
