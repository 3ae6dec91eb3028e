import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/lib/env-vars.js';
import { json, signup } from '../helpers/api.js';
import { startTestApp, type TestApp, tempDir } from '../helpers/app.js';

/**
 * docs/deployment.md, "Secrets at rest": with KEY_ENCRYPTION_KEY set, the signing private keys and
 * the webhook secrets are sealed in the database; KEY_ENCRYPTION_KEY_OLD reads them during a
 * rotation; a database no configured key opens refuses the start. (A SQLite file in every mode:
 * the bytes on disk are read; test/e2e/copy.test.ts serves sealed rows from PostgreSQL.)
 */
describe('secrets at rest', () => {
  const keyA = randomBytes(32).toString('base64');
  const keyB = randomBytes(32).toString('base64');
  const base = { WEBHOOK_ALLOW_PRIVATE: 'true' };
  let temp: ReturnType<typeof tempDir>;
  let t: TestApp | undefined;
  beforeEach(() => {
    temp = tempDir();
  });
  afterEach(async () => {
    await t?.close();
    t = undefined;
    temp.remove();
  });
  const start = async (env: Record<string, string>) => (t = await startTestApp({ dir: temp.dir, env: { ...base, ...env } }));
  const stop = async () => {
    await t?.close();
    t = undefined;
  };
  const storedSecrets = async (app: TestApp) => ({
    keys: (await app.services.database.db.selectFrom('signing_keys').select('private_jwk').execute()).map((r) => r.private_jwk),
    webhooks: (await app.services.database.db.selectFrom('webhook_endpoints').select('secret').execute()).map((r) => r.secret),
  });
  /** The database's bytes as written on disk, with its WAL. */
  const fileBytes = () => ['rz.db', 'rz.db-wal'].map((f) => join(temp.dir, f)).filter(existsSync).map((f) => readFileSync(f).toString('latin1')).join('');

  it('plain rows from before a key was set are sealed at the next start; the file then holds no private key or webhook secret', async () => {
    const first = await start({});
    const user = await signup(first);
    const created = await json(first, 'POST', '/api/webhooks', { url: 'http://127.0.0.1:9/hook', event_types: ['token.created'] }, user.jwt);
    expect(created.statusCode, created.body).toBe(201);
    const { secret } = created.json() as { secret: string };
    const [jwk] = (await storedSecrets(first)).keys;
    const { d } = JSON.parse(jwk ?? '{}') as { d: string };
    expect(fileBytes()).toContain(d);
    await stop();

    const sealed = await start({ KEY_ENCRYPTION_KEY: keyA });
    const stored = await storedSecrets(sealed);
    for (const value of [...stored.keys, ...stored.webhooks]) expect(value).toMatch(/^sealed:v1:/);
    // The token issued before still verifies: the same key, now sealed.
    expect((await json(sealed, 'GET', '/api/me', undefined, user.jwt)).statusCode).toBe(200);
    const another = await json(sealed, 'POST', '/api/webhooks', { url: 'http://127.0.0.1:9/other', event_types: ['token.created'] }, user.jwt);
    const second = (another.json() as { secret: string }).secret;
    await stop();
    const bytes = fileBytes();
    for (const [name, value] of [['private key', d], ['webhook secret', secret.slice('whsec_'.length)], ['second webhook secret', second.slice('whsec_'.length)]]) {
      expect(bytes.includes(value ?? ''), `the file holds the ${name}`).toBe(false);
    }
  });

  it('rotation: KEY_ENCRYPTION_KEY_OLD opens, rows are sealed again under the new key, and then the old key is not needed', async () => {
    const first = await start({ KEY_ENCRYPTION_KEY: keyA });
    const user = await signup(first);
    const before = await storedSecrets(first);
    await stop();

    const rotated = await start({ KEY_ENCRYPTION_KEY: keyB, KEY_ENCRYPTION_KEY_OLD: keyA });
    const after = await storedSecrets(rotated);
    const keyIdOf = (value: string | undefined) => value?.split(':')[2];
    expect(keyIdOf(after.keys[0])).not.toBe(keyIdOf(before.keys[0]));
    expect((await json(rotated, 'GET', '/api/me', undefined, user.jwt)).statusCode).toBe(200);
    await stop();

    const newOnly = await start({ KEY_ENCRYPTION_KEY: keyB });
    expect((await json(newOnly, 'GET', '/api/me', undefined, user.jwt)).statusCode).toBe(200);
  });

  it.each([
    ['no key at all', {}],
    ['a key that did not seal them', { KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64') }],
  ])('sealed rows and %s: the start is refused naming KEY_ENCRYPTION_KEY', async (_name, env) => {
    await start({ KEY_ENCRYPTION_KEY: keyA });
    await stop();
    const refused = await startTestApp({ dir: temp.dir, env: { ...base, ...env } }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as Error).message).toMatch(/signing key .* is encrypted under a key that neither KEY_ENCRYPTION_KEY nor KEY_ENCRYPTION_KEY_OLD holds/);
  });
});
