import { describe, expect, it } from 'vitest';
import { CallerCache } from '../src/cache.js';
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
const user = (sessionId: string, userId = 'u1'): Caller => ({ userId, tokenType: 'user', tokenId: sessionId, scopes: ['*'] });

describe('CallerCache', () => {
  it('holds at most maxEntries, dropping the oldest first', () => {
    const cache = new CallerCache(2, 60_000);
    cache.set('a', api('1'), 0);
    cache.set('b', api('2'), 0);
    cache.set('c', api('3'), 0);
    expect([cache.get('a', 1), cache.get('b', 1)?.tokenId, cache.get('c', 1)?.tokenId]).toEqual([undefined, '2', '3']);
    expect(cache.size).toBe(2);
  });

  it('keeps an answer until the token expires or the maximum age, whichever is first; never an expired one', () => {
    const cache = new CallerCache(10, 60_000);
    cache.set('soon', { ...api('1'), expiresAt: new Date(5_000) }, 0);
    cache.set('late', { ...api('2'), expiresAt: new Date(600_000) }, 0);
    cache.set('gone', { ...api('3'), expiresAt: new Date(0) }, 0);
    expect([cache.get('soon', 4_999)?.tokenId, cache.get('soon', 5_000)]).toEqual(['1', undefined]);
    expect([cache.get('late', 59_999)?.tokenId, cache.get('late', 60_000)]).toEqual(['2', undefined]);
    expect(cache.get('gone', 0)).toBeUndefined();
  });

  it('drops exactly what an invalidation names', () => {
    const cache = new CallerCache(10, 60_000);
    const fill = () => {
      cache.drop({ kind: 'all' });
      cache.set('api', api('t1'), 0);
      cache.set('app', api('t2', 'u1', 'a1'), 0);
      cache.set('jwt', user('s1'), 0);
      cache.set('other', api('t3', 'u2'), 0);
    };
    const left = () => ['api', 'app', 'jwt', 'other'].filter((k) => cache.get(k, 1) !== undefined);
    const cases = [
      [{ kind: 'token', tokenId: 't1' }, ['app', 'jwt', 'other']],
      // A session id is never taken for a token id, nor the reverse.
      [{ kind: 'token', tokenId: 's1' }, ['api', 'app', 'jwt', 'other']],
      [{ kind: 'session', sessionId: 't1' }, ['api', 'app', 'jwt', 'other']],
      [{ kind: 'session', sessionId: 's1' }, ['api', 'app', 'other']],
      [{ kind: 'user', userId: 'u1' }, ['other']],
      [{ kind: 'app', appId: 'a1' }, ['api', 'jwt', 'other']],
      [{ kind: 'user-tokens' }, ['api', 'app', 'other']],
      [{ kind: 'all' }, []],
    ] as const;
    for (const [what, expected] of cases) {
      fill();
      cache.drop(what);
      expect(left(), JSON.stringify(what)).toEqual(expected);
    }
  });
});

describe('invalidationOf', () => {
  const message = (event: string | undefined, data: unknown) => ({ event, data: typeof data === 'string' ? data : JSON.stringify(data) });
  it.each([
    ['token.revoked', { token_id: 't', token_type: 'api_token', user_id: 'u' }, { kind: 'token', tokenId: 't' }],
    ['token.updated', { token_id: 't', scopes: [] }, { kind: 'token', tokenId: 't' }],
    ['session.revoked', { session_id: 's', user_id: 'u' }, { kind: 'session', sessionId: 's' }],
    ['user.deleted', { user_id: 'u' }, { kind: 'user', userId: 'u' }],
    ['app.deleted', { app_id: 'a', user_id: 'u' }, { kind: 'app', appId: 'a' }],
    ['keys.changed', {}, { kind: 'user-tokens' }],
    ['reset', {}, { kind: 'all' }],
    // Anything this version cannot read drops everything rather than trusting a cache it cannot keep right.
    ['something.new', { id: 'x' }, { kind: 'all' }],
    [undefined, { token_id: 't' }, { kind: 'all' }],
    ['token.revoked', { token_id: 42 }, { kind: 'all' }],
    ['token.revoked', 'not json', { kind: 'all' }],
    ['session.revoked', null, { kind: 'all' }],
  ])('%s %j', (event, data, expected) => {
    expect(invalidationOf(message(event, data))).toEqual(expected);
  });
});
