import type { EventSourceMessage } from 'eventsource-parser';
import type { Invalidation } from './cache.js';

const ALL: Invalidation = { kind: 'all', revoke: false };

const field = (data: Record<string, unknown>, name: string): string | undefined => {
  const value = data[name];
  return typeof value === 'string' ? value : undefined;
};

function parseData(text: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * What a message of rz-auth's event stream makes wrong in the cache. Revocations and deletions are
 * kept as refusals; a `token.updated` drops the token: its next use is introspected and gets the
 * narrowed scopes. An event this version does
 * not know, or one whose data lacks what it names, drops everything: a cache that cannot tell what
 * changed must not be trusted.
 */
export function invalidationOf(message: EventSourceMessage): Invalidation {
  const data = parseData(message.data);
  if (data === null) return ALL;
  const id = (name: string, make: (value: string) => Invalidation): Invalidation => {
    const value = field(data, name);
    return value === undefined ? ALL : make(value);
  };
  switch (message.event) {
    case 'token.revoked':
      return id('token_id', (tokenId) => ({ kind: 'token', tokenId, revoke: true }));
    case 'token.updated':
      return id('token_id', (tokenId) => ({ kind: 'token', tokenId, revoke: false }));
    case 'session.revoked':
      return id('session_id', (sessionId) => ({ kind: 'session', sessionId, revoke: true }));
    case 'user.deleted':
      return id('user_id', (userId) => ({ kind: 'user', userId, revoke: true }));
    case 'app.deleted':
      return id('app_id', (appId) => ({ kind: 'app', appId, revoke: true }));
    case 'keys.changed':
      return { kind: 'user-tokens', revoke: false };
    default:
      return ALL;
  }
}
