import { describe, expect, it } from 'vitest';
import { CallerCache, type Invalidation, type Known } from '../src/cache.js';
import type { Caller } from '../src/caller.js';
import { invalidationOf } from '../src/invalidation.js';

/** The cache's bounds and what each event drops: pure parts, no clock but the one passed in. */

const api = (tokenId: string, userId = 'u1', appId?: string): Caller => ({
  userId,
  tokenType: appId ? 'app_token' : 'api_token',
  tokenId,
  scopes: [],
  ...(appId ? { appId } : {}),
});
const idOf = (known: Known) => (known === undefined || known === 'revoked' ? known : known.tokenId);
const user = (sessionId: string, userId = 'u1'): Caller => ({ userId, tokenType: 'user', tokenId: sessionId, scopes: ['*'] });

describe('CallerCache', () => {
  it('holds at most maxEntries, dropping the oldest first', () => {
    const cache = new CallerCache(2, 60_000);
    cache.set('a', api('1'), 0);
    cache.set('b', api('2'), 0);
    cache.set('c', api('3'), 0);
    expect([cache.get('a', 1), idOf(cache.get('b', 1)), idOf(cache.get('c', 1))]).toEqual([undefined, '2', '3']);
    expect(cache.size).toBe(2);
  });

  it('keeps an answer until the token expires or the maximum age, whichever is first; never an expired one', () => {
    const cache = new CallerCache(10, 60_000);
    cache.set('soon', { ...api('1'), expiresAt: new Date(5_000) }, 0);
    cache.set('late', { ...api('2'), expiresAt: new Date(600_000) }, 0);
    cache.set('gone', { ...api('3'), expiresAt: new Date(0) }, 0);
    expect([idOf(cache.get('soon', 4_999)), cache.get('soon', 5_000)]).toEqual(['1', undefined]);
    expect([idOf(cache.get('late', 59_999)), cache.get('late', 60_000)]).toEqual(['2', undefined]);
    expect(cache.get('gone', 0)).toBeUndefined();
  });

  it('keeps what a final change names as refused (until the token would expire), drops what must be asked again', () => {
    const cache = new CallerCache(10, 60_000);
    const keys = ['api', 'app', 'jwt', 'other'];
    const fill = () => {
      cache.apply({ kind: 'all', revoke: false });
      cache.set('api', api('t1'), 0);
      cache.set('app', api('t2', 'u1', 'a1'), 0);
      cache.set('jwt', user('s1'), 0);
      cache.set('other', api('t3', 'u2'), 0);
    };
    const state = () => Object.fromEntries(keys.map((k) => [k, cache.get(k, 1) === undefined ? 'asked' : cache.get(k, 1) === 'revoked' ? 'refused' : 'cached']));
    const only = (mark: 'refused' | 'asked', ...named: string[]) => Object.fromEntries(keys.map((k) => [k, named.includes(k) ? mark : 'cached']));
    const cases: Array<[Invalidation, Record<string, string>]> = [
      [{ kind: 'token', tokenId: 't1', revoke: true }, only('refused', 'api')],
      [{ kind: 'token', tokenId: 't1', revoke: false }, only('asked', 'api')],
      // A session id is never taken for a token id, nor the reverse.
      [{ kind: 'token', tokenId: 's1', revoke: true }, only('refused')],
      [{ kind: 'session', sessionId: 't1', revoke: true }, only('refused')],
      [{ kind: 'session', sessionId: 's1', revoke: true }, only('refused', 'jwt')],
      [{ kind: 'user', userId: 'u1', revoke: true }, only('refused', 'api', 'app', 'jwt')],
      [{ kind: 'app', appId: 'a1', revoke: true }, only('refused', 'app')],
      [{ kind: 'user-tokens', revoke: false }, only('asked', 'jwt')],
      [{ kind: 'all', revoke: false }, only('asked', ...keys)],
    ];
    for (const [what, expected] of cases) {
      fill();
      cache.apply(what);
      expect(state(), JSON.stringify(what)).toEqual(expected);
    }
    fill();
    cache.apply({ kind: 'token', tokenId: 't1', revoke: true });
    expect([cache.get('api', 59_999), cache.get('api', 60_000)]).toEqual(['revoked', undefined]);
  });
});

describe('invalidationOf', () => {
  const message = (event: string | undefined, data: unknown) => ({ event, data: typeof data === 'string' ? data : JSON.stringify(data) });
  it.each([
    ['token.revoked', { token_id: 't', token_type: 'api_token', user_id: 'u' }, { kind: 'token', tokenId: 't', revoke: true }],
    ['token.updated', { token_id: 't', scopes: [] }, { kind: 'token', tokenId: 't', revoke: false }],
    ['session.revoked', { session_id: 's', user_id: 'u' }, { kind: 'session', sessionId: 's', revoke: true }],
    ['user.deleted', { user_id: 'u' }, { kind: 'user', userId: 'u', revoke: true }],
    ['app.deleted', { app_id: 'a', user_id: 'u' }, { kind: 'app', appId: 'a', revoke: true }],
    ['keys.changed', {}, { kind: 'user-tokens', revoke: false }],
    ['reset', {}, { kind: 'all', revoke: false }],
    // Anything this version cannot read drops everything rather than trusting a cache it cannot keep right.
    ['something.new', { id: 'x' }, { kind: 'all', revoke: false }],
    [undefined, { token_id: 't' }, { kind: 'all', revoke: false }],
    ['token.revoked', { token_id: 42 }, { kind: 'all', revoke: false }],
    ['token.revoked', 'not json', { kind: 'all', revoke: false }],
    ['session.revoked', null, { kind: 'all', revoke: false }],
  ])('%s %j', (event, data, expected) => {
    expect(invalidationOf(message(event, data))).toEqual(expected);
  });
});
