import { derive, inspect } from '@rz-auth/token';
import { describe, expect, it } from 'vitest';
import { madeFrom, NOW_S, PARENT, printed, refused, rz } from './token-fixtures.js';

/** Contract §14.7: rz token attenuate and rz token inspect, the token always on stdin. */

const CHILD = derive(PARENT, { ttl: '15m', scopes: ['apps:read', 'games:publish'], aud: ['publishing-api', 'scoreboard'], label: 'ci run 4411', now: NOW_S });
const attenuate = (stdin: string, ...argv: string[]) => printed(['token', 'attenuate', ...argv], { stdin });

describe('rz token attenuate', () => {
  it('appends the narrowing caveats, keeps the child id and the chain, and cannot widen', async () => {
    const narrower = await attenuate(`${CHILD}\n`, '--ttl', '60', '--scopes', 'games:publish,tokens:read', '--aud', 'scoreboard', '--label', 'test agent', '--rate', '5/60s');
    const before = inspect(CHILD);
    const after = inspect(narrower);
    expect(after.caveats.slice(0, before.caveats.length)).toEqual(before.caveats);
    expect(after.caveats.slice(before.caveats.length).map((c) => ({ [c.type]: c.value }))).toEqual([
      { exp: NOW_S + 60 }, { scopes: ['games:publish', 'tokens:read'] }, { aud: ['scoreboard'] }, { label: 'test agent' }, { rl: { q: 5, w: 60 } },
    ]);
    expect(after).toMatchObject({ childId: before.childId, parentRef: before.parentRef, exp: NOW_S + 60, scopes: ['games:publish'], aud: ['scoreboard'], labels: ['ci run 4411', 'test agent'] });
    expect(madeFrom(narrower, PARENT)).toBe(true);
    // A longer life appended later does not extend the earlier one.
    expect(inspect(await attenuate(narrower, '--ttl', '7d')).exp).toBe(NOW_S + 60);
  });

  it('is usable in a pipe: derive | attenuate | attenuate', async () => {
    const derived = await printed(['token', 'derive', '--ttl', '1h'], { env: { RZ_TOKEN: PARENT } });
    const twice = await attenuate(await attenuate(derived, '--aud', 'a,b'), '--aud', 'b');
    expect(inspect(twice)).toMatchObject({ aud: ['b'], exp: NOW_S + 3600 });
  });

  it('refusals: no restriction or empty stdin exit 2; a parent, a malformed or an overlong child exit 1, never echoed', async () => {
    expect(await refused(['token', 'attenuate'], { stdin: CHILD }, [CHILD])).toMatchObject({ code: 2, stderr: expect.stringContaining('needs at least one of --ttl') });
    expect(await refused(['token', 'attenuate', '--ttl', '60'], { stdin: '' })).toMatchObject({ code: 2, stderr: expect.stringContaining('No token on stdin') });
    expect(await refused(['token', 'attenuate', '--ttl', '60', '--host', 'x.example'], { stdin: CHILD }, [CHILD])).toMatchObject({ code: 2 });
    expect(await refused(['token', 'attenuate', '--ttl', '60'], { stdin: PARENT })).toMatchObject({ code: 1, stderr: expect.stringContaining('is a parent, not a child') });
    const flipped = CHILD.slice(0, 60) + (CHILD[60] === 'A' ? 'B' : 'A') + CHILD.slice(61);
    expect(await refused(['token', 'attenuate', '--ttl', '60'], { stdin: flipped }, [flipped, CHILD.slice(4, 60)])).toEqual({ code: 1, stderr: 'rz: The token on stdin is not a well-formed rzd_ token\n' });
    const full = derive(PARENT, { ttl: 60, scopes: [], aud: ['a'], cidrs: ['10.0.0.0/8'], label: 'x', rl: { q: 1, w: 1 }, now: NOW_S });
    const thirteen = await attenuate(full, '--ttl', '60', '--scopes', 'apps:read', '--aud', 'a', '--cidr', '10.0.0.0/8', '--label', 'y', '--rate', '1/1s');
    expect(await refused(['token', 'attenuate', '--ttl', '60', '--scopes', 'apps:read', '--aud', 'a', '--label', 'z'], { stdin: thirteen }, [thirteen])).toMatchObject({ code: 1, stderr: expect.stringContaining('more than 16 caveats') });
  });
});

describe('rz token inspect', () => {
  it('prints what the caveats say, in order, and that nothing was verified', async () => {
    const narrower = await attenuate(CHILD, '--ttl', '60', '--aud', 'scoreboard', '--label', 'test agent', '--cidr', '192.0.2.0/24');
    const { h, code } = await rz(['token', 'inspect'], { stdin: narrower });
    expect(code).toBe(0);
    expect(h.stderr()).toBe('');
    const { parentRef, childId } = inspect(narrower);
    expect(h.stdout()).toBe([
      'Derived token (rzd_), decoded WITHOUT verifying: only rz-auth checks its signature, its parent and revocations.',
      `Parent ref:  ${parentRef}`,
      `Child id:    ${childId}`,
      'Caveats, in order:',
      '   1. iat 2026-12-08 00:00:00 UTC',
      '   2. exp 2026-12-08 00:15:00 UTC',
      '   3. scopes apps:read, games:publish',
      '   4. aud publishing-api, scoreboard',
      '   5. label "ci run 4411"',
      '   6. exp 2026-12-08 00:01:00 UTC',
      '   7. aud scoreboard',
      '   8. cidrs 192.0.2.0/24',
      '   9. label "test agent"',
      "In effect, as far as the caveats go (the parent's current scopes, expiry and networks can narrow them further):",
      '  Issued:      2026-12-08 00:00:00 UTC',
      '  Expires:     2026-12-08 00:01:00 UTC (in 1m)',
      '  Scopes:      apps:read, games:publish',
      '  Audience:    scoreboard',
      '  Networks:    [192.0.2.0/24]',
      "  Rate limits: the parent's only",
      '  Labels:      ci run 4411 › test agent',
      '',
    ].join('\n'));
    expect(h.stdout()).not.toContain(narrower.slice(4, 40));
    h.cleanup();
  });

  it('--json: the decoded fields, the caveats as written, verified false', async () => {
    const { h, code } = await rz(['token', 'inspect', '--json'], { stdin: `${CHILD}\n` });
    expect(code).toBe(0);
    const { parentRef, childId } = inspect(CHILD);
    expect(JSON.parse(h.stdout())).toEqual({
      verified: false,
      parent_ref: parentRef,
      child_id: childId,
      caveats: [{ iat: NOW_S }, { exp: NOW_S + 900 }, { scopes: ['apps:read', 'games:publish'] }, { aud: ['publishing-api', 'scoreboard'] }, { label: 'ci run 4411' }],
      issued_at: '2026-12-08T00:00:00Z',
      expires_at: '2026-12-08T00:15:00Z',
      expired: false,
      not_before: null,
      scopes: ['apps:read', 'games:publish'],
      aud: ['publishing-api', 'scoreboard'],
      cidrs: [],
      labels: ['ci run 4411'],
      rate_limits: [],
    });
    h.cleanup();
    const old = derive(PARENT, { ttl: 60, now: NOW_S - 3600 });
    const expired = await rz(['token', 'inspect', '--json'], { stdin: old });
    expect(JSON.parse(expired.h.stdout())).toMatchObject({ expired: true, scopes: null, aud: null });
    expired.h.cleanup();
    const human = await rz(['token', 'inspect'], { stdin: old });
    expect(human.h.stdout()).toContain("(expired)\n  Scopes:      the parent's (no scopes caveat)\n  Audience:    any service (no aud caveat)\n");
    human.h.cleanup();
  });

  it('a parent or a malformed token exits 1 without echoing it; an empty stdin exits 2', async () => {
    expect(await refused(['token', 'inspect'], { stdin: PARENT })).toEqual({ code: 1, stderr: 'rz: The token on stdin is a parent (rz_ or rza_): only derived tokens (rzd_) can be inspected\n' });
    expect(await refused(['token', 'inspect', '--json'], { stdin: `${CHILD}x` }, [CHILD.slice(4, 60)])).toEqual({ code: 1, stderr: 'rz: The token on stdin is not a well-formed rzd_ token\n' });
    expect((await refused(['token', 'inspect'])).code).toBe(2);
    expect((await refused(['token', 'frobnicate'])).code).toBe(2);
  });
});
