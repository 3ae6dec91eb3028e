import { randomBytes, randomUUID } from 'node:crypto';
import { parseDatabase } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { FLAG, SoftAuthenticator } from '../test/helpers/webauthn-authenticator.js';
import { request } from '../test/helpers/server-process.js';
import { rzAuthEnv, type Store, WEBAUTHN_RP } from './env.js';
import { Pace } from './pace.js';

/*
 * `POST /api/auth/passkey/login` under load. Each request needs a challenge of its own (single
 * use, contract §12.6) and an assertion over it. A few users register a passkey through the API,
 * as the page does, with the software authenticator of the tests; before each run the harness
 * writes one challenge per expected request into the store, as POST /api/auth/passkey/options
 * does (thousands of option requests would load the server between slices for nothing measured),
 * and signs one assertion per challenge. The server then does what a passkey login costs: take
 * the challenge, find the credential and its user, verify the signature, record the counter, then
 * the login (session, JWT, audit line). No password hash.
 */

/** Users with a passkey; the requests go round them. */
const USERS = 16;
/** Contract §12.6: a challenge lives 5 minutes. */
const CHALLENGE_TTL_MS = 300_000;
const BATCH = 500;
const PASSWORD = 'a benchmark password, long enough';

export interface PasskeyLogins {
  /** JSON bodies for one run of `scenario` lasting `seconds`, one per request, each with its own challenge and assertion. */
  bodies(scenario: string, seconds: number): Promise<string[]>;
  close(): Promise<void>;
}

/** The 2xx JSON body of a setup request; anything else stops the run before a load measures it. */
async function ok<T>(baseUrl: string, path: string, options: { token?: string; body?: unknown }, status = 200): Promise<T> {
  const res = await request(baseUrl, 'POST', path, options);
  if (res.status !== status) throw new Error(`setup: POST ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as T;
}

/** Signs up user `n` and registers a passkey for it through the API: user verification, counter 0. */
async function enrol(baseUrl: string, n: number): Promise<SoftAuthenticator> {
  const { token } = await ok<{ token: string }>(baseUrl, '/api/auth/signup', { body: { email: `passkey-${n}@bench.example.com`, username: `passkey_${n}`, password: PASSWORD } }, 201);
  const started = await ok<{ challenge_id: string; options: { challenge: string; user: { id: string } } }>(baseUrl, '/api/me/mfa/webauthn/options', { token, body: {} });
  const auth = new SoftAuthenticator(started.options.user.id, -7);
  const credential = auth.register({ challenge: started.options.challenge, origin: WEBAUTHN_RP.origin, rpId: WEBAUTHN_RP.id, flags: FLAG.UP | FLAG.UV, counter: 0 });
  await ok(baseUrl, '/api/me/mfa/webauthn', { token, body: { challenge_id: started.challenge_id, name: 'Bench passkey', credential } }, 201);
  return auth;
}

/**
 * Registers {@link USERS} passkeys through rz-auth at `baseUrl` and logs in once with each through
 * the API (options, then login), so a load never measures refusals. Every assertion carries counter
 * 0, as synced passkeys do: a zero counter over a stored zero is accepted every time (docs/mfa.md),
 * so no request is taken for a clone whatever order they arrive in.
 */
export async function preparePasskeyLogins(baseUrl: string, store: Store): Promise<PasskeyLogins> {
  const keys: SoftAuthenticator[] = [];
  for (let n = 0; n < USERS; n++) keys.push(await enrol(baseUrl, n));
  const sign = (auth: SoftAuthenticator, challengeId: string, challenge: string): string =>
    JSON.stringify({ challenge_id: challengeId, credential: auth.assert({ challenge, origin: WEBAUTHN_RP.origin, rpId: WEBAUTHN_RP.id, flags: FLAG.UP | FLAG.UV, counter: 0 }) });
  for (const auth of keys) {
    const { challenge_id: id, options } = await ok<{ challenge_id: string; options: { challenge: string } }>(baseUrl, '/api/auth/passkey/options', { body: {} });
    const res = await request(baseUrl, 'POST', '/api/auth/passkey/login', { body: JSON.parse(sign(auth, id, options.challenge)) as unknown });
    if (res.status !== 200) throw new Error(`setup: POST /api/auth/passkey/login answered ${res.status}: ${JSON.stringify(res.body)}`);
  }
  const database = await openDatabase(parseDatabase(rzAuthEnv(store)));
  const { db } = database;
  const pace = new Pace(db, 'webauthn_challenges');

  let next = 0;
  return {
    async bodies(scenario, seconds) {
      const wanted = await pace.wanted(scenario, seconds);
      const expires = new Date(Date.now() + CHALLENGE_TTL_MS).toISOString();
      // As WebAuthnAssertions.forPasskey stores them: 32 random bytes, named by a UUID, bound to no user.
      const challenges = Array.from({ length: wanted }, () => ({ id: randomUUID(), purpose: 'passkey_login', user_id: null, challenge: randomBytes(32).toString('base64url'), expires_at: expires }));
      for (let start = 0; start < challenges.length; start += BATCH) await db.insertInto('webauthn_challenges').values(challenges.slice(start, start + BATCH)).execute();
      pace.started(scenario, expires, challenges.length, seconds);
      return challenges.map(({ id, challenge }) => sign(keys[next++ % keys.length] as SoftAuthenticator, id, challenge));
    },
    async close() {
      await database.close();
    },
  };
}
