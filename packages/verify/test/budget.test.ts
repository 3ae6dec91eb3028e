import Fastify from 'fastify';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { generateToken } from '../../../src/lib/token-format.js';
import { clientKeyOf } from '../src/budget.js';
import { type Caller, VerifyError } from '../src/index.js';
import { closeAll, json, outcome, served, verifierOf } from './fake-upstream.js';

/**
 * Anonymous callers cannot spend a service's introspection budget: anyone can make up well-formed
 * tokens (the checksum is public), each costing an introspection counted against the service's
 * credential at rz-auth. Each client address has a budget of lookups, and tokens never seen active
 * share one that is only part of the credential's. The fake rz-auth has no event stream, so
 * nothing is cached and every verify() of a well-formed token is a lookup.
 */

// The clock stands still (Date only; timers and I/O run), so no bucket refills during a test.
beforeEach(() => void vi.useFakeTimers({ toFake: ['Date'] }));
afterEach(async () => {
  vi.useRealTimers();
  await closeAll();
});

const inactive = () => served({ '/api/introspect': json(() => ({ active: false })) });
const apiCaller = { active: true, token_type: 'api_token', sub: 'u1', jti: 't1', scope: '' };
const bearer = () => `Bearer ${generateToken('api')}`;

async function refusal(promise: Promise<unknown>): Promise<VerifyError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(VerifyError);
  return error as VerifyError;
}

describe('the budget of each client address', () => {
  it('one address with made-up tokens spent the credential\'s introspections without bound: now 429 rate_limited past its burst, with Retry-After, and other addresses are still served', async () => {
    const upstream = await inactive();
    const verifier = verifierOf(upstream.url, { lookupsPerAddress: { burst: 5, perSecond: 0.1 }, firstSeenLookups: false });
    for (let i = 0; i < 5; i++) expect(await outcome(verifier.verify(bearer(), '203.0.113.7'))).toBe('invalid_token');
    const error = await refusal(verifier.verify(bearer(), '203.0.113.7'));
    expect({ status: error.status, code: error.code, retryAfter: error.retryAfter, challenge: error.wwwAuthenticate }).toEqual({
      status: 429,
      code: 'rate_limited',
      retryAfter: 10,
      challenge: undefined,
    });
    expect(upstream.count('/api/introspect')).toBe(5);
    expect(await outcome(verifier.verify(bearer(), '203.0.113.8'))).toBe('invalid_token');
    // A malformed token costs no lookup, so it is refused as before, whatever the budget.
    expect(await outcome(verifier.verify('Bearer rz_nope', '203.0.113.7'))).toBe('invalid_token');
  });

  it('is on by default: the 101st lookup from one address in a burst is refused', async () => {
    const upstream = await inactive();
    const verifier = verifierOf(upstream.url);
    const outcomes = [];
    for (let i = 0; i < 101; i++) outcomes.push(await outcome(verifier.verify(bearer(), '203.0.113.7')));
    expect(outcomes.slice(0, 100).every((o) => o === 'invalid_token')).toBe(true);
    expect(outcomes[100]).toBe('rate_limited');
  });

  it('the addresses of one IPv6 /64 share a budget, and the IPv4-mapped form is its IPv4 address', async () => {
    expect(clientKeyOf('2001:db8:1:2::5')).toBe(clientKeyOf('2001:0db8:0001:0002:ffff::9'));
    expect(clientKeyOf('2001:db8:1:2::5')).not.toBe(clientKeyOf('2001:db8:1:3::5'));
    expect(clientKeyOf('::ffff:192.0.2.1')).toBe('192.0.2.1');
    // The mapped form in hexadecimal groups, and a scoped link-local address, each read as ipaddr.js reads them.
    expect(clientKeyOf('::ffff:c000:201')).toBe('192.0.2.1');
    expect(clientKeyOf('fe80::1%eth0')).toBe(clientKeyOf('fe80::2'));
    const upstream = await inactive();
    const verifier = verifierOf(upstream.url, { lookupsPerAddress: { burst: 2, perSecond: 0.1 }, firstSeenLookups: false });
    expect(await outcome(verifier.verify(bearer(), '2001:db8:1:2::1'))).toBe('invalid_token');
    expect(await outcome(verifier.verify(bearer(), '2001:db8:1:2::2'))).toBe('invalid_token');
    expect(await outcome(verifier.verify(bearer(), '2001:db8:1:2:abcd::3'))).toBe('rate_limited');
  });

  it('the Fastify plugin answers 429 with Retry-After and the code, by request.ip', async () => {
    const upstream = await inactive();
    const verifier = verifierOf(upstream.url, { lookupsPerAddress: { burst: 1, perSecond: 0.5 } });
    const app = Fastify();
    await app.register(verifier.fastifyPlugin);
    app.get('/any', { config: { rzAuth: true } }, async () => ({ ok: true }));
    const get = () => app.inject({ method: 'GET', url: '/any', headers: { authorization: bearer() }, remoteAddress: '198.51.100.4' });
    expect((await get()).statusCode).toBe(401);
    const limited = await get();
    expect([limited.statusCode, limited.headers['retry-after'], limited.headers['www-authenticate'], limited.json().code]).toEqual([429, '2', undefined, 'rate_limited']);
    await app.close();
  });
});

describe('the budget of tokens never seen', () => {
  it('new tokens from many addresses could spend the whole credential budget: now only their share, and a token seen active is still checked', async () => {
    const upstream = await served({ '/api/introspect': json(() => apiCaller) });
    const verifier = verifierOf(upstream.url, { firstSeenLookups: { burst: 3, perSecond: 0.1 } });
    const known = bearer();
    const callers: Caller[] = [];
    callers.push(await verifier.verify(known, '192.0.2.1'));
    for (let i = 2; i <= 3; i++) callers.push(await verifier.verify(bearer(), `192.0.2.${i}`));
    expect(callers).toHaveLength(3);
    const error = await refusal(verifier.verify(bearer(), '192.0.2.4'));
    expect([error.status, error.code, error.retryAfter]).toEqual([429, 'rate_limited', 10]);
    // Seen active before: not new, so not held to the share of new tokens (the stream is down, so it is looked up again).
    expect(await outcome(verifier.verify(known, '192.0.2.5'))).toBe('accepted');
    expect(upstream.count('/api/introspect')).toBe(4);
  });

  it('a refusal by the shared budget does not spend the address\'s own', async () => {
    const upstream = await inactive();
    const verifier = verifierOf(upstream.url, { lookupsPerAddress: { burst: 1, perSecond: 0.1 }, firstSeenLookups: { burst: 1, perSecond: 0.1 } });
    expect(await outcome(verifier.verify(bearer(), '192.0.2.1'))).toBe('invalid_token');
    expect(await outcome(verifier.verify(bearer(), '192.0.2.2'))).toBe('rate_limited');
  });

  it('bad budgets are refused at creation, naming the option', () => {
    expect(() => verifierOf('http://127.0.0.1:9', { lookupsPerAddress: { burst: 0, perSecond: 1 } })).toThrow(/lookupsPerAddress/);
    expect(() => verifierOf('http://127.0.0.1:9', { firstSeenLookups: { burst: 1, perSecond: 0 } })).toThrow(/firstSeenLookups/);
  });
});
