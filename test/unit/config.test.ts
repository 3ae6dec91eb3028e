import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('configuration', () => {
  it('has documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      database: { kind: 'sqlite', path: './data/rz-auth.db', synchronous: 'NORMAL', cacheKiB: 2048 },
      redisUrl: null,
      logLevel: 'info',
      jwt: { ttlSeconds: 3600, issuer: 'rz-auth', audience: 'rz-api' },
      signupEnabled: true,
      changes: { pollMs: 1000, retentionMs: 24 * 3_600_000 },
      scopes: [],
      events: { heartbeatMs: 5000, maxStreamsPerCredential: 100 },
      auditRetentionMs: 365 * 86_400_000,
      webhooks: { allowPrivate: false, timeoutMs: 10_000 },
    });
    expect(config.rateLimits.service).toEqual({ quota: 60_000, windowSeconds: 60 });
    expect(config.rateLimits['leak-report']).toEqual({ quota: 60, windowSeconds: 60 });
    expect(config.passwords).toMatchObject({ minLength: 15, argon2: { memoryKiB: 19456, timeCost: 2, parallelism: 1 } });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.passwords.argon2)).toBe(true);
  });

  it('TRUST_PROXY: a hop count or proxies by address and network', () => {
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, ::1' }).trustProxy).toEqual(['10.0.0.0/8', '::1']);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, ::ffff:10.0.0.0/104, 2001:db8::/32' }).trustProxy).toEqual(['10.0.0.0/8', '::ffff:10.0.0.0/104', '2001:db8::/32']);
    expect(loadConfig({ TRUST_PROXY: '10' }).trustProxy).toBe(10);
    for (const url of ['redis://h:6379', 'redis://h:6379/', 'redis://h:6379/3', 'rediss://u:p@h:6380/15']) expect(loadConfig({ REDIS_URL: url }).redisUrl).toBe(url);
  });

  it('TRUST_PROXY took a network whose text merely began with ::ffff: (0:0:0:0:ffff::/98, IPv4-translated, not IPv4-mapped) for IPv4 and refused it as wide: now judged by its addresses', () => {
    expect(loadConfig({ TRUST_PROXY: '0:0:0:0:ffff::/98' }).trustProxy).toEqual(['0:0:0:0:ffff::/98']);
    expect(() => loadConfig({ TRUST_PROXY: '::ffff:10.0.0.0/103' })).toThrow(/TRUST_PROXY.*wider/);
  });

  it('a hop count with a wildcard HOST let any client reaching the port pick its address: refused unless TRUST_PROXY_HOPS_CONFIRMED', () => {
    for (const host of ['0.0.0.0', '::', '[::]', '0:0:0:0:0:0:0:0']) {
      expect(() => loadConfig({ HOST: host, TRUST_PROXY: '1' }), host).toThrow(/^TRUST_PROXY=1 counts proxy hops, but HOST=.* listens on every interface.*TRUST_PROXY_HOPS_CONFIRMED=true/);
    }
    expect(loadConfig({ HOST: '0.0.0.0', TRUST_PROXY: '1', TRUST_PROXY_HOPS_CONFIRMED: 'true' }).trustProxy).toBe(1);
    expect(() => loadConfig({ HOST: '0.0.0.0', TRUST_PROXY: '1', TRUST_PROXY_HOPS_CONFIRMED: 'maybe' })).toThrow(/^TRUST_PROXY_HOPS_CONFIRMED must be true or false/);
    // Naming the proxies has no such hole, and one interface is reached only by whom it faces.
    expect(loadConfig({ HOST: '0.0.0.0', TRUST_PROXY: '10.0.0.5, 10.0.1.0/24' }).trustProxy).toEqual(['10.0.0.5', '10.0.1.0/24']);
    expect(loadConfig({ HOST: '10.0.0.9', TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ HOST: '::', TRUST_PROXY: 'off' }).trustProxy).toBe(false);
  });

  it('reads postgres URLs', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h/db' }).database).toEqual({ kind: 'postgres', url: 'postgres://u@h/db', poolSize: 10 });
  });

  it('a URL that does not parse was a bare "Invalid URL" at connection time: now refused naming the variable, never echoing its password', () => {
    for (const [name, value] of [
      ['DATABASE_URL', 'postgres://u:s3cret@127.0.0.1:abc/db'],
      ['DATABASE_URL', 'postgres://u:s3cret@h:99999/db'],
      ['REDIS_URL', 'redis://:s3cret@[zz'],
    ] as const) {
      const error = (() => {
        try {
          loadConfig({ [name]: value });
        } catch (thrown) {
          return thrown as Error;
        }
      })();
      expect(error?.message).toMatch(new RegExp(`^${name} is not a valid URL`));
      expect(error?.message).not.toContain('s3cret');
    }
  });

  it('HOST was never checked ([::1] failed at listen with ENOTFOUND): an IPv6 address in brackets is taken, anything else not an address or name is refused', () => {
    expect(loadConfig({ HOST: '[::1]' }).host).toBe('::1');
    expect(loadConfig({ HOST: '::' }).host).toBe('::');
    expect(loadConfig({ HOST: 'auth.internal' }).host).toBe('auth.internal');
    for (const host of ['http://x', 'a b', '[zz]', '-bad', 'a..b', 'x'.repeat(254)]) expect(() => loadConfig({ HOST: host }), host).toThrow(/^HOST must be/);
  });

  it.each([
    [{ PORT: 'abc' }, /PORT/],
    // 0 made every SIGTERM, on an idle server too, log 'shutdown timed out' and exit 1.
    [{ SHUTDOWN_TIMEOUT_MS: '0' }, /SHUTDOWN_TIMEOUT_MS/],
    [{ PORT: '70000' }, /PORT/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
    [{ DATABASE_URL: 'sqlite:' }, /DATABASE_URL/],
    [{ SQLITE_CACHE_KIB: '32' }, /SQLITE_CACHE_KIB/],
    [{ SQLITE_CACHE_KIB: '2MB' }, /SQLITE_CACHE_KIB/],
    [{ REDIS_URL: 'http://x' }, /REDIS_URL/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    [{ JWT_TTL_SECONDS: '10' }, /JWT_TTL_SECONDS/],
    [{ PASSWORD_MIN_LENGTH: '7' }, /PASSWORD_MIN_LENGTH/],
    [{ SIGNUP_ENABLED: 'maybe' }, /SIGNUP_ENABLED/],
    [{ ARGON2_MEMORY_KIB: '8192' }, /ARGON2_MEMORY_KIB/],
    [{ ARGON2_TIME_COST: '1' }, /ARGON2_TIME_COST/],
    [{ CHANGES_POLL_MS: '50' }, /CHANGES_POLL_MS/],
    [{ CHANGES_POLL_MS: '60000' }, /CHANGES_POLL_MS/],
    [{ CHANGES_POLL_MS: '1s' }, /CHANGES_POLL_MS/],
    [{ CHANGES_RETENTION_HOURS: '0' }, /CHANGES_RETENTION_HOURS/],
    [{ AUDIT_RETENTION_DAYS: '0' }, /AUDIT_RETENTION_DAYS/],
    [{ AUDIT_RETENTION_DAYS: 'forever' }, /AUDIT_RETENTION_DAYS/],
    [{ WEBHOOK_TIMEOUT_SECONDS: '0' }, /WEBHOOK_TIMEOUT_SECONDS/],
    [{ WEBHOOK_TIMEOUT_SECONDS: '61' }, /WEBHOOK_TIMEOUT_SECONDS/],
    [{ WEBHOOK_ALLOW_PRIVATE: 'maybe' }, /WEBHOOK_ALLOW_PRIVATE/],
    [{ RATE_LIMIT_LEAK_REPORT: 'lots' }, /RATE_LIMIT_LEAK_REPORT/],
    [{ EVENTS_HEARTBEAT_MS: '15001' }, /EVENTS_HEARTBEAT_MS/],
    [{ EVENTS_HEARTBEAT_MS: '999' }, /EVENTS_HEARTBEAT_MS/],
    [{ EVENTS_STREAMS_PER_CREDENTIAL: '0' }, /EVENTS_STREAMS_PER_CREDENTIAL/],
    [{ RATE_LIMIT_SERVICE: 'lots' }, /RATE_LIMIT_SERVICE/],
    [{ TOKEN_MAX_LIFETIME_DAYS: '0' }, /TOKEN_MAX_LIFETIME_DAYS/],
    [{ TOKEN_MAX_LIFETIME_DAYS: '90d' }, /TOKEN_MAX_LIFETIME_DAYS/],
    [{ TOKEN_IDLE_REVOKE_DAYS: '0' }, /TOKEN_IDLE_REVOKE_DAYS/],
    [{ TOKEN_IDLE_REVOKE_DAYS: '-5' }, /TOKEN_IDLE_REVOKE_DAYS/],
    [{ TRUST_PROXY: 'true' }, /TRUST_PROXY/],
    [{ TRUST_PROXY: '10.0.0.0/abc' }, /TRUST_PROXY/],
    [{ TRUST_PROXY: '10.0.0.0/33' }, /TRUST_PROXY/],
    // A network of every address believed any X-Forwarded-For, as "true" would.
    [{ TRUST_PROXY: '0.0.0.0/0' }, /TRUST_PROXY.*every address/],
    [{ TRUST_PROXY: '10.0.0.1, ::/0' }, /TRUST_PROXY.*every address/],
    // Regression: a network holding every IPv4 address as IPv4-mapped IPv6, or most of the
    // internet, passed the "every address" guard, and so did more hops than any chain has.
    [{ TRUST_PROXY: '::ffff:0.0.0.0/96' }, /TRUST_PROXY.*wider/],
    [{ TRUST_PROXY: '::ffff:0:0/100' }, /TRUST_PROXY.*wider/],
    [{ TRUST_PROXY: '::/80' }, /TRUST_PROXY.*wider/],
    [{ TRUST_PROXY: '0.0.0.0/1,128.0.0.0/1' }, /TRUST_PROXY.*wider/],
    [{ TRUST_PROXY: '2000::/3' }, /TRUST_PROXY.*wider/],
    [{ TRUST_PROXY: '99999' }, /TRUST_PROXY.*at most 10 hops/],
    // Regression: a misspelt limit was ignored, leaving the default in force.
    [{ RATE_LIMIT_LOGIN: '5/60' }, /^RATE_LIMIT_LOGIN is not a rate limit; the limits are RATE_LIMIT_CREDENTIAL, /],
    [{ REDIS_URL: 'redis://127.0.0.1:6379/abc' }, /REDIS_URL.*database number/],
    [{ REDIS_URL: 'redis://127.0.0.1:6379/1/2' }, /REDIS_URL.*database number/],
  ])('refuses %o with a message naming the variable', (env, name) => {
    expect(() => loadConfig(env)).toThrow(name);
  });

  it('token policies are off unless set, and read as whole days when set', () => {
    expect(loadConfig({}).tokens).toEqual({ maxLifetimeDays: null, idleRevokeDays: null });
    expect(loadConfig({ TOKEN_MAX_LIFETIME_DAYS: '90', TOKEN_IDLE_REVOKE_DAYS: ' 30 ' }).tokens).toEqual({ maxLifetimeDays: 90, idleRevokeDays: 30 });
  });

  it('webhooks: private targets only when asked for, attempts of 1 to 60 seconds', () => {
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_SECONDS: '60' }).webhooks).toEqual({ allowPrivate: true, timeoutMs: 60_000, connectTimeoutMs: 5_000 });
  });

  it('webhooks: a connect timeout of its own, 1 to 60 seconds, 5 by default', () => {
    expect(loadConfig({ WEBHOOK_CONNECT_TIMEOUT_SECONDS: '2' }).webhooks.connectTimeoutMs).toBe(2_000);
    expect(() => loadConfig({ WEBHOOK_CONNECT_TIMEOUT_SECONDS: '0' })).toThrow(/WEBHOOK_CONNECT_TIMEOUT_SECONDS/);
  });

  it("LEAK_GITHUB_KEYS_URL: GitHub's by default, https, or http to loopback only", () => {
    expect(loadConfig({}).leaks.githubKeysUrl).toBe('https://api.github.com/meta/public_keys/secret_scanning');
    expect(loadConfig({ LEAK_GITHUB_KEYS_URL: 'http://127.0.0.1:8080/keys' }).leaks.githubKeysUrl).toBe('http://127.0.0.1:8080/keys');
    for (const url of ['http://keys.example.com/k', 'ftp://127.0.0.1/k', 'not a url']) expect(() => loadConfig({ LEAK_GITHUB_KEYS_URL: url })).toThrow(/LEAK_GITHUB_KEYS_URL/);
  });
});
