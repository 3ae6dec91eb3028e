import { describe, expect, it } from 'vitest';
import type { Principal } from '../../src/auth/principal.js';
import { credentialKey, limitField, policyField } from '../../src/http/rate-limit.js';
import type { Decision } from '../../src/ratelimit/limiter.js';

const decision = (quota: number, windowSeconds: number, remaining = 1, resetSeconds = 30): Decision => ({
  policy: 'credential',
  quota,
  windowSeconds,
  remaining,
  resetSeconds,
  allowed: true,
});

const principal = (type: Principal['type'], userId: string, credentialId: string): Principal => ({
  type,
  user: { id: userId, username: 'u', email: 'u@example.com' },
  credentialId,
  scopes: [],
  expiresAt: null,
  app: null,
});

describe('RateLimit fields and buckets', () => {
  it('RateLimit-Policy follows the quota it is given, even when a policy is reconfigured (built once per quota)', () => {
    expect(policyField(decision(5, 60))).toBe('"credential";q=5;w=60');
    expect(policyField(decision(5, 60))).toBe('"credential";q=5;w=60');
    expect(policyField(decision(7, 60))).toBe('"credential";q=7;w=60');
    expect(policyField(decision(7, 3600))).toBe('"credential";q=7;w=3600');
    expect(policyField(decision(5, 60))).toBe('"credential";q=5;w=60');
  });

  it('RateLimit carries what remains and when the window resets', () => {
    expect(limitField(decision(5, 60, 4, 59))).toBe('"credential";r=4;t=59');
  });

  it('a user token counts against its user, any other token against itself, and the key is stable', () => {
    const jwt = principal('user', 'u1', 'session-1');
    const otherSession = principal('user', 'u1', 'session-2');
    const api = principal('api_token', 'u1', 't1');
    const app = principal('app_token', 'u1', 't2');
    expect(credentialKey(jwt)).toBe('user:u1');
    expect(credentialKey(otherSession)).toBe('user:u1');
    expect(credentialKey(api)).toBe('token:t1');
    expect(credentialKey(app)).toBe('token:t2');
    expect(credentialKey(api)).toBe(credentialKey(principal('api_token', 'u2', 't1')));
  });
});
