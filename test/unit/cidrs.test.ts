import { describe, expect, it } from 'vitest';
import { AllowList, narrows, parseCidrs } from '../../src/tokens/cidrs.js';

describe('network allow-lists', () => {
  it('parses into address/prefix, lower case, each once; a bare address is one host', () => {
    expect(parseCidrs(['10.0.0.0/8', '2001:DB8::/32', '192.0.2.1', '10.0.0.0/8', '::1'])).toEqual(['10.0.0.0/8', '2001:db8::/32', '192.0.2.1/32', '::1/128']);
  });

  it.each([['10.0.0.0/33'], ['::/129'], ['10.0.0.0/'], ['10.0.0.0/-1'], ['10.0.0.0/08x'], ['10.0.0/8'], ['fe80::1%eth0/64'], ['example.com'], [''], ['1'.repeat(50)], [' 10.0.0.0/8'], ['10.0.0.0/8 '], ['10.0.0.0/ 8']])(
    'refuses %j naming allowed_cidrs',
    (cidr) => {
      expect(parseCidrs([cidr])).toMatchObject({ field: 'allowed_cidrs' });
    },
  );

  it('admits addresses inside, including IPv4-mapped forms, and nothing else, after admitting one', () => {
    const list = new AllowList(['192.0.2.0/24', '2001:db8::/32']);
    expect(list.admits('192.0.2.9')).toBe(true);
    // The remembered admission must not leak to another address.
    expect(list.admits('192.0.3.9')).toBe(false);
    expect(list.admits('192.0.2.9')).toBe(true);
    expect(list.admits('::ffff:192.0.2.10')).toBe(true);
    expect(list.admits('2001:db8:1::1')).toBe(true);
    expect(list.admits('2001:db9::1')).toBe(false);
    expect(list.admits('')).toBe(false);
    expect(list.admits('not an address')).toBe(false);
  });

  it('an IPv4 client is its mapped IPv6 address: an IPv6 network holding the mapped range admits it', () => {
    expect(new AllowList(['::/0']).admits('203.0.113.7')).toBe(true);
    expect(new AllowList(['::ffff:0:0/96']).admits('203.0.113.7')).toBe(true);
    expect(new AllowList(['2001:db8::/32']).admits('203.0.113.7')).toBe(false);
    expect(new AllowList(['0.0.0.0/0']).admits('2001:db8::1')).toBe(false);
  });

  it('a narrowing keeps every network inside one of the current ones', () => {
    expect(narrows(null, ['0.0.0.0/0'])).toBe(true);
    expect(narrows(['10.0.0.0/8'], ['10.1.0.0/16', '10.2.3.4/32'])).toBe(true);
    expect(narrows(['10.0.0.0/8'], ['10.0.0.0/8'])).toBe(true);
    expect(narrows(['10.0.0.0/8'], ['10.0.0.0/7'])).toBe(false);
    expect(narrows(['10.0.0.0/8'], ['11.0.0.0/16'])).toBe(false);
    expect(narrows(['10.0.0.0/8'], ['::ffff:11.0.0.0/104'])).toBe(false);
    expect(narrows(['10.0.0.0/8'], ['::/0'])).toBe(false);
    expect(narrows(['2001:db8::/32'], ['10.0.0.0/8'])).toBe(false);
    expect(narrows(['2001:db8::/32', '10.0.0.0/8'], ['2001:db8:ff::/48'])).toBe(true);
  });

  it('the same addresses written in the other family were refused as a widening: now a narrowing, as the allow-list admits either spelling', () => {
    expect(narrows(['127.0.0.0/8'], ['::ffff:127.0.0.1/128'])).toBe(true);
    expect(narrows(['::ffff:127.0.0.0/104'], ['127.0.0.1/32'])).toBe(true);
    expect(narrows(['10.0.0.0/8'], ['::ffff:10.0.0.0/104'])).toBe(true);
    expect(narrows(['::/0'], ['10.0.0.0/8'])).toBe(true);
    expect(narrows(['::ffff:127.0.0.0/104'], ['127.0.0.0/7'])).toBe(false);
  });

  it('legacy IPv4 spellings that ipaddr.js alone would read as other hosts are refused, not reinterpreted', () => {
    for (const cidr of ['127.1/32', '0x7f.0.0.1/8', '010.0.0.1/8', '::ffff:0x7f.0.0.1/128', '1.2.3.04']) {
      expect(parseCidrs([cidr]), cidr).toMatchObject({ field: 'allowed_cidrs' });
    }
    expect(new AllowList(['10.0.0.0/8']).admits('010.0.0.1')).toBe(false);
  });

  it('stores IPv6 in RFC 5952 form and an IPv4-mapped network with its dotted tail', () => {
    expect(parseCidrs(['2001:0DB8:0:0:1:0:0:1/128', '::FFFF:7F00:1/120', '0:0:0:0:ffff:0:0:0/98'])).toEqual(['2001:db8::1:0:0:1/128', '::ffff:127.0.0.0/120', '::ffff:0:0:0/98']);
  });
});
