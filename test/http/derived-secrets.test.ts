import { derivationKey, derive } from '@rz-auth/token';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { createApiToken, json, signup, type TestUser } from '../helpers/api.js';
import { newKek } from '../helpers/derived.js';

/** Secrets of derived tokens (contract §14.9): dk never leaves the server unsealed, children never reach the logs. */
describe('derived token secrets', () => {
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await startTestApp({ env: { DERIVE_KEK: newKek() } });
    user = await signup(t);
  });
  afterAll(() => t.close());

  it('dk appears in no response, log or audit line, and is ciphertext in the store; children are redacted from logs', async () => {
    const from = t.logs.length;
    const parent = await createApiToken(t, user.jwt, { scopes: ['tokens:read'], derivable: true });
    const dk = Buffer.from(derivationKey(parent.token));
    const child = derive(parent.token, { ttl: 600, label: 'ci run 1' });
    const bodies = [
      (await json(t, 'GET', '/api/me', undefined, child)).body,
      (await json(t, 'GET', `/api/tokens/${parent.id}`, undefined, child)).body,
      (await json(t, 'GET', '/api/tokens', undefined, user.jwt)).body,
      (await json(t, 'GET', `/api/me?token=${child}`, undefined, child)).body,
      (await json(t, 'POST', '/api/tokens', { name: child }, child)).body,
      (await json(t, 'GET', '/api/audit', undefined, user.jwt)).body,
    ];
    const row = await t.services.database.db.selectFrom('tokens').select('derive_key').where('id', '=', parent.id).executeTakeFirstOrThrow();
    const audit = await t.services.database.db.selectFrom('audit_events').select('details').execute();
    const logs = (await t.settledLogs()).slice(from).join('');
    const forms = [dk.toString('base64url'), dk.toString('hex'), dk.toString('base64')];
    for (const text of [...bodies, logs, JSON.stringify(audit)]) for (const form of forms) expect(text).not.toContain(form);
    for (const form of forms) expect(row.derive_key).not.toContain(form);
    expect(row.derive_key).toMatch(/^sealed:v1:/);
    // Not the child, nor any long run of it (the scanner knows base64url's - and _).
    expect(logs).not.toContain(child.slice(4, 40));
    expect(logs).not.toMatch(/rzd_[A-Za-z0-9_-]{20,}/i);
    expect(logs).toContain('[REDACTED]');
  });
});
