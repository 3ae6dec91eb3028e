import { describe, expect, it } from 'vitest';
import { addressKey } from '../../src/ratelimit/address.js';

describe('client address buckets', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::ffff:cb00:7107', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::ffff', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['64:ff9b::203.0.113.7', '64:ff9b:0:0::/64'],
  ])('%s → %s', (ip, key) => {
    expect(addressKey(ip)).toBe(key);
  });

  it('all of a /64 share one bucket; the next /64 does not', () => {
    expect(addressKey('2001:db8:0:1::1')).toBe(addressKey('2001:db8:0:1:ffff:ffff:ffff:ffff'));
    expect(addressKey('2001:db8:0:1::1')).not.toBe(addressKey('2001:db8:0:2::1'));
  });
});
