import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../src/lib/token-format.js';
import { createApiToken, expectInvalidToken, expectProblem, json, signup } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';

const p256 = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

/**
 * A leak report claims only what was checked (docs/leak-response.md): GitHub's format is recorded
 * as verified only with GitHub's signature, by a key fetched from LEAK_GITHUB_KEYS_URL (a local
 * key server here), and the answer is the same 202 either way.
 */
describe("leak reports in GitHub's format, signed and not", () => {
  let t: TestApp;
  let keyServer: Server;
  let fetches = 0;
  const clock = new TestClock(Date.now());
  const github = p256();
  const stranger = p256();
  const KEY_ID = '90a421169f0a406205f1563a953312f0be898d3c7b6c06b681aa86a874555f4a';

  beforeAll(async () => {
    keyServer = createServer((_req, res) => {
      fetches += 1;
      const key = github.publicKey.export({ type: 'spki', format: 'pem' });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ public_keys: [{ key_identifier: KEY_ID, key, is_current: true }] }));
    });
    keyServer.listen(0, '127.0.0.1');
    await once(keyServer, 'listening');
    const url = `http://127.0.0.1:${(keyServer.address() as AddressInfo).port}/meta/public_keys/secret_scanning`;
    t = await startTestApp({ env: { LEAK_GITHUB_KEYS_URL: url, RATE_LIMITS: 'on', RATE_LIMIT_LEAK_REPORT: '5/60' }, clock });
  });
  afterAll(async () => {
    await t.close();
    keyServer.close();
  });

  const matches = (...tokens: string[]) => JSON.stringify(tokens.map((token) => ({ token, type: 'rz_api_token', url: 'https://github.com/o/r/blob/x/a.env', source: 'content' })));
  const signed = (body: string, key: KeyObject = github.privateKey, keyId = KEY_ID) => ({
    'github-public-key-identifier': keyId,
    'github-public-key-signature': sign('sha256', Buffer.from(body), { key, dsaEncoding: 'der' }).toString('base64'),
  });
  const post = (payload: string, headers: Record<string, string> = {}, remoteAddress = '203.0.113.5') =>
    t.inject({ method: 'POST', url: '/api/tokens/leaked', headers: { 'content-type': 'application/json', ...headers }, payload, remoteAddress });
  const leakedDetails = async (jwt: string) => {
    const events = (await json(t, 'GET', '/api/audit?type=token.leaked', undefined, jwt)).json() as { events: Array<{ details: Record<string, unknown> }> };
    return events.events[0]?.details;
  };
  const shape = (res: { statusCode: number; body: string }) => ({ status: res.statusCode, body: res.body });

  it("records a report signed by GitHub's key as verified, and one signed by another key, or over other bytes, as not", async () => {
    const owner = await signup(t);
    const [a, b, c] = [await createApiToken(t, owner.jwt), await createApiToken(t, owner.jwt), await createApiToken(t, owner.jwt)];
    const good = matches(a.token);
    const verified = await post(good, signed(good), '203.0.113.10');
    expect(verified.statusCode).toBe(202);
    // Revoked before the answer: the token is dead the moment the reporter hears back.
    expectInvalidToken(await json(t, 'GET', '/api/me', undefined, a.token));
    expect(await leakedDetails(owner.jwt)).toEqual({ token_type: 'api_token', name: a.name, hint: `rz_${a.token.slice(-4)}`, report_format: 'github', verified: true });

    const forged = matches(b.token);
    const unverified = await post(forged, signed(forged, stranger.privateKey), '203.0.113.11');
    expect(shape(unverified)).toEqual(shape(verified));
    expectInvalidToken(await json(t, 'GET', '/api/me', undefined, b.token));
    expect(await leakedDetails(owner.jwt)).toEqual({ token_type: 'api_token', name: b.name, hint: `rz_${b.token.slice(-4)}`, report_format: 'github' });

    // A signature GitHub made over another body does not vouch for this one.
    const spliced = await post(matches(c.token), signed(good), '203.0.113.12');
    expect(shape(spliced)).toEqual(shape(verified));
    expect((await leakedDetails(owner.jwt))?.verified).toBeUndefined();
    expect(fetches).toBe(1);
  });

  it('fetches the keys again for an unknown key id at most once a minute, and after an hour in any case', async () => {
    const owner = await signup(t);
    // Made now: the owner's JWT does not outlive the hour this test moves the clock by.
    const tokens = await Promise.all(Array.from({ length: 7 }, () => createApiToken(t, owner.jwt)));
    const next = () => matches(tokens.pop()?.token ?? '');
    const before = fetches;
    // Within a minute of the last fetch, a made-up key id fetches nothing.
    const early = next();
    await post(early, signed(early, stranger.privateKey, 'unknown-early'), '203.0.113.19');
    expect(fetches).toBe(before);
    clock.advance(61_000);
    for (const address of ['203.0.113.20', '203.0.113.21', '203.0.113.22']) {
      const body = next();
      expect((await post(body, signed(body, stranger.privateKey, `unknown-${address}`), address)).statusCode).toBe(202);
    }
    expect(fetches).toBe(before + 1);
    clock.advance(61_000);
    const body = next();
    await post(body, signed(body, stranger.privateKey, 'unknown-later'), '203.0.113.23');
    expect(fetches).toBe(before + 2);
    // A known key id is served from the cache until the hour is up.
    clock.advance(3_000_000);
    const known = next();
    await post(known, signed(known), '203.0.113.25');
    expect(fetches).toBe(before + 2);
    clock.advance(600_000);
    const again = next();
    await post(again, signed(again), '203.0.113.24');
    expect(fetches).toBe(before + 3);
  });

  it('each well-formed string counts against the address budget; strings that are not tokens cost only their request', async () => {
    const three = JSON.stringify({ tokens: [generateToken('api'), generateToken('app'), generateToken('service'), 'junk', 'rz_nope'] });
    const first = await post(three, {}, '203.0.113.30');
    expect(first.statusCode).toBe(202);
    expect(first.headers.ratelimit).toBe('"leak-report";r=2;t=60');
    expectProblem(await post(three, {}, '203.0.113.30'), 429, 'rate_limited');
    const junk = JSON.stringify({ tokens: ['junk', 'more junk', 'rz_nope'] });
    expect((await post(junk, {}, '203.0.113.31')).headers.ratelimit).toBe('"leak-report";r=4;t=60');
  });
});
