import { describe, expect, it } from 'vitest';
import { introspect } from '../src/introspect.js';
import { admits, isNetworkList } from '../src/networks.js';

/** The allow-list rules of the verifier, on their own: what a list may hold and whom it admits. */

const caller = (allowedCidrs?: readonly string[]) => ({ userId: 'u', tokenType: 'api_token' as const, tokenId: 't', scopes: [], ...(allowedCidrs ? { allowedCidrs } : {}) });

describe('admits', () => {
  it('IPv4 and IPv6 networks, IPv4-mapped addresses, bare hosts', () => {
    const limited = caller(['203.0.113.0/24', '2001:db8::/32', '198.51.100.7/32']);
    for (const address of ['203.0.113.1', '::ffff:203.0.113.9', '2001:db8:1::5', '198.51.100.7']) expect(admits(limited, address)).toBe(true);
    for (const address of ['203.0.114.1', '198.51.100.8', '2001:db9::1', '', 'localhost', '203.0.113.1%eth0']) expect(admits(limited, address)).toBe(false);
  });

  it('no list admits every address and none at all; a list without an address admits nobody', () => {
    expect(admits(caller(), undefined)).toBe(true);
    expect(admits(caller(), '198.51.100.1')).toBe(true);
    expect(admits(caller(['0.0.0.0/0']), undefined)).toBe(false);
    expect(admits(caller([]), '198.51.100.1')).toBe(false);
  });
});

describe('isNetworkList', () => {
  it('takes what rz-auth sends and nothing else', () => {
    expect(isNetworkList(['203.0.113.0/24', '2001:db8::/32', '0.0.0.0/0'])).toBe(true);
    for (const bad of ['203.0.113.0', '203.0.113.0/33', '2001:db8::/129', 'fe80::1%eth0/64', 'x/8', 7, null]) expect(isNetworkList([bad])).toBe(false);
    expect(isNetworkList('203.0.113.0/24')).toBe(false);
  });
});

describe('an introspection answer with a list the verifier cannot read', () => {
  it('is no answer to trust: unavailable, never active', async () => {
    const answer = { active: true, token_type: 'api_token', sub: 'u', jti: 't', scope: '', allowed_cidrs: ['everywhere'] };
    const fetchFn: typeof fetch = async () => new Response(JSON.stringify(answer), { status: 200, headers: { 'content-type': 'application/json' } });
    const result = await introspect(fetchFn, 'http://rz.invalid', 'rzs_x', 'rz_y', 1000);
    expect('unavailable' in result).toBe(true);
  });
});
