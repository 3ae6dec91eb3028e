import { performance } from 'node:perf_hooks';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../helpers/app.js';

/**
 * Security family 10, work before authentication: whatever the service computes from a request
 * before it is authenticated or counted (the Authorization header, the URL, the body, the access
 * log's redaction) is linear in its input, so no request costs much more than the plainest bad one.
 *
 * Timing on a shared 2-core machine is noisy, so each hostile request is compared with a baseline
 * measured in the same test, with a wide margin: a super-linear pass over these inputs costs tens of
 * milliseconds in every round where the baseline costs well under one. Each side is its fastest
 * round: a round the scheduler or a collection interrupted only ever takes longer, so the fastest
 * is the cost of the work itself, where a median moved with a busy machine.
 */

const ROUNDS = 9;
/** Hostile requests may cost this many times the baseline, plus a few milliseconds of slack. */
const FACTOR = 5;
const SLACK_MS = 5;

const fastest = (values: number[]): number => Math.min(...values);

describe('work before authentication is linear in the input', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  async function cost(request: InjectOptions): Promise<number> {
    const times: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const start = performance.now();
      const res = await t.inject(request);
      times.push(performance.now() - start);
      expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, res.body).toBeLessThan(500);
    }
    // The access lines are written at the end of the turn: their redaction counts too.
    await t.settledLogs();
    return fastest(times);
  }

  const me = (authorization: string): InjectOptions => ({ method: 'GET', url: '/api/me', headers: { authorization } });
  const spaces = ' '.repeat(15_000);
  const hostile: Array<[string, InjectOptions]> = [
    ['Bearer, 15,000 spaces and x (CPU exhaustion through the Authorization header)', me(`Bearer${spaces}x`)],
    ['15,000 spaces, then Bearer x', me(`${spaces}Bearer x`)],
    ['Bearer x, then 15,000 spaces and a letter', me(`Bearer x${spaces}y`)],
    ['Bearer, then 15,000 alternating spaces and tabs', me(`Bearer${' \t'.repeat(7_500)}x`)],
    ['a 15,000-character scheme', me(`${'B'.repeat(15_000)} x`)],
    ['Bearer and a 15,000-character token-alphabet value ending in a bad character', me(`Bearer ${'a'.repeat(15_000)}!`)],
    ['a URL of repeated JWT starts (the access log redaction)', { method: 'GET', url: `/api/me?q=${'eyJ-'.repeat(3_000)}` }],
    ['a URL of repeated API-token prefixes', { method: 'GET', url: `/api/me?q=${'rz_rza_rzs_'.repeat(1_200)}` }],
    ['a URL of percent escapes', { method: 'GET', url: `/api/me?q=${'%25'.repeat(4_000)}` }],
    ['a URL of escapes of escapes, decoded four times over', { method: 'GET', url: `/api/nothing?q=${'%2525'.repeat(3_000)}` }],
    // Each run that is not UTF-8 made decodeURIComponent throw in the redaction, 30 to 85 ms a request.
    ['a URL of escapes that are not UTF-8, %ffx repeated (a throw and catch per run)', { method: 'GET', url: `/api/me?q=${'%ffx'.repeat(3_900)}` }],
    ['a URL of truncated UTF-8 sequences, %e0x repeated', { method: 'GET', url: `/api/me?q=${'%e0x'.repeat(3_900)}` }],
    [
      'a leak report whose field name is %c3x repeated (named in the 400)',
      { method: 'POST', url: '/api/tokens/leaked', headers: { 'content-type': 'application/json' }, payload: `{"${'%c3x'.repeat(3_900)}":1}` },
    ],
    [
      'a login body whose one key, 7,600 characters of %c3x, appears twice (quoted in the 400)',
      { method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'application/json' }, payload: `{"${'%c3x'.repeat(1_900)}":1,"${'%c3x'.repeat(1_900)}":1}` },
    ],
    ['a URL of JWT starts separated by dots', { method: 'GET', url: `/api/me?q=${'eyJ.'.repeat(3_000)}` }],
    ['a URL of many parameters named with escapes (the secret-parameter redaction)', { method: 'GET', url: `/api/me?${'p%61ss%3D1%26&'.repeat(1_000)}` }],
    ['an absolute-form URL with a long user information', { method: 'GET', url: `http://${'a:'.repeat(5_000)}@x/api/me` }],
    [
      'a login body of 16 KiB of escapes',
      { method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'application/json' }, payload: `{"email":"a@b.co","password":"${'\\\\'.repeat(8_000)}"}` },
    ],
    [
      'a content type followed by 10,000 spaces',
      { method: 'POST', url: '/api/auth/login', headers: { 'content-type': `application/json${' '.repeat(10_000)}x` }, payload: '{}' },
    ],
  ];

  it('the access line of a long URL holds at most its first 2,048 characters and its length (redacting all of 15 KB of escapes cost milliseconds)', async () => {
    const url = `/api/nothing?q=${'%2525'.repeat(3_000)}`;
    await t.inject({ method: 'GET', url });
    await t.settledLogs();
    const line = JSON.parse(t.logs.findLast((l) => l.includes('"url_length"')) ?? '{}') as { url?: string; url_length?: number };
    expect(line.url_length).toBe(url.length);
    // The escapes are one run that may hold a token, longer than the cut: none of it is kept.
    expect(line.url).toBe('/api/nothing?q=…');
    const listed = `/api/nothing?${'a=%25&'.repeat(500)}`;
    await t.inject({ method: 'GET', url: listed });
    await t.settledLogs();
    const cut = JSON.parse(t.logs.findLast((l) => l.includes(`"url_length":${listed.length}`)) ?? '{}') as { url?: string };
    expect(cut.url?.length).toBeLessThanOrEqual(2_049);
    expect(cut.url?.startsWith('/api/nothing?a=%25&a=%25&')).toBe(true);
  });

  it.each(hostile)('%s', async (_what, request) => {
    const baseline = await cost(me('Bearer x'));
    const hostileCost = await cost(request);
    expect(hostileCost, `fastest ${hostileCost.toFixed(2)} ms against a baseline of ${baseline.toFixed(2)} ms`).toBeLessThan(baseline * FACTOR + SLACK_MS);
  });
});
