import { describe, expect, it } from 'vitest';
import { sameNetwork } from '../../src/oauth/approval.js';
import { cleanDeviceName, deviceTokenName, newUserCode, normalizeUserCode, USER_CODE_ALPHABET } from '../../src/oauth/codes.js';

describe('user codes (RFC 8628 §6.1)', () => {
  it('are 8 letters of the alphabet', () => {
    for (let i = 0; i < 200; i++) expect(newUserCode()).toMatch(new RegExp(`^[${USER_CODE_ALPHABET}]{8}$`));
  });

  it('typed input is upper-cased and stripped of spaces and dashes; anything else is no code', () => {
    expect(normalizeUserCode(' wdjb-mjht ')).toBe('WDJBMJHT');
    expect(normalizeUserCode('WD JB MJ HT')).toBe('WDJBMJHT');
    for (const bad of ['WDJB-MJHA', 'WDJB-MJH', 'WDJB-MJHTT', 'ẞDJB-MJHT', '', 'W'.repeat(100)]) expect(normalizeUserCode(bad), bad).toBeNull();
  });
});

describe('same network (contract §13.6)', () => {
  it('same /24 for IPv4, /56 for IPv6, IPv4-mapped read as IPv4', () => {
    expect(sameNetwork('203.0.113.5', '203.0.113.200')).toBe(true);
    expect(sameNetwork('203.0.113.5', '203.0.114.5')).toBe(false);
    expect(sameNetwork('2001:db8:0:ab00::1', '2001:db8:0:abff::2')).toBe(true);
    expect(sameNetwork('2001:db8:0:ab00::1', '2001:db8:0:ac00::1')).toBe(false);
    expect(sameNetwork('::ffff:203.0.113.5', '203.0.113.9')).toBe(true);
    expect(sameNetwork('203.0.113.5', '2001:db8::1')).toBe(false);
    expect(sameNetwork('', '203.0.113.5')).toBe(false);
  });
});

describe('device names and token names', () => {
  it('device names: 1–64 characters after trimming, no control characters', () => {
    expect(cleanDeviceName(undefined)).toBeNull();
    expect(cleanDeviceName('  box ')).toBe('box');
    expect(cleanDeviceName('x'.repeat(65))).toBe(false);
    expect(cleanDeviceName('a\u0085b')).toBe(false);
    expect(cleanDeviceName('   ')).toBe(false);
  });

  it('the token is named "<client> on <device or unknown device> (<date>)", at most 100 characters', () => {
    const at = Date.parse('2026-12-01T10:00:00Z');
    expect(deviceTokenName('rz CLI', null, at)).toBe('rz CLI on unknown device (2026-12-01)');
    expect([...deviceTokenName('c'.repeat(60), 'd'.repeat(64), at)]).toHaveLength(100);
  });
});
