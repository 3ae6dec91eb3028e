import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { SqlChallengeStore } from '../../src/account/mfa/challenge-store.js';
import { SqlFactorStore } from '../../src/account/mfa/factor-store.js';
import { SqlLockoutStore } from '../../src/account/mfa/lockout-store.js';
import { SqlMfaUserStore } from '../../src/account/mfa/mfa-user-store.js';
import { SqlPendingLoginStore } from '../../src/account/mfa/pending-login-store.js';
import { newRecoveryCodes, recoveryCodeDigests } from '../../src/account/mfa/recovery-codes.js';
import { SqlRecoveryCodeStore } from '../../src/account/mfa/recovery-code-store.js';
import { newTotpSecret, totpCodeAt } from '../../src/account/mfa/totp.js';
import { checkTotp, confirmTotp, type TotpDeps } from '../../src/account/mfa/totp-check.js';
import { TotpSecrets } from '../../src/account/mfa/totp-secrets.js';
import { resealTotpSecrets } from '../../src/account/mfa/totp-reseal.js';
import { SqlTotpStore } from '../../src/account/mfa/totp-store.js';
import { type NewWebAuthnCredential, SqlWebAuthnStore } from '../../src/account/mfa/webauthn-store.js';
import { parseSealingKey, UnsealError } from '../../src/lib/sealed.js';
import { TestClock } from '../helpers/clock.js';
import { insertUser, type StoreHarness, useStores } from './fixture.js';

const newKey = () => parseSealingKey(randomBytes(32).toString('base64'), 'MFA_ENCRYPTION_KEY');
const iso = (ms: number) => new Date(ms).toISOString();
const MINUTE = 60_000;

/**
 * Second factors on every database (contract §12.3, §12.6): TOTP steps accepted once by
 * compare-and-set, recovery codes used once, WebAuthn counters with the clone signal, single-use
 * challenges, waiting logins that allow a fixed number of attempts, all under parallel use.
 */
export function mfaStoreContract(name: string, harness: () => StoreHarness): void {
  describe(`second-factor store contract: ${name}`, () => {
    const s = useStores(harness);
    let totp: SqlTotpStore;
    let deps: TotpDeps;
    let recovery: SqlRecoveryCodeStore;
    let webauthn: SqlWebAuthnStore;
    let factors: SqlFactorStore;
    let challenges: SqlChallengeStore;
    let logins: SqlPendingLoginStore;
    let mfaUsers: SqlMfaUserStore;
    let lockouts: SqlLockoutStore;
    beforeAll(() => {
      const { db } = s.database;
      totp = new SqlTotpStore(db);
      deps = { store: totp, secrets: new TotpSecrets({ current: newKey(), old: null }) };
      recovery = new SqlRecoveryCodeStore(db);
      webauthn = new SqlWebAuthnStore(db);
      factors = new SqlFactorStore(db);
      challenges = new SqlChallengeStore(db);
      logins = new SqlPendingLoginStore(db);
      mfaUsers = new SqlMfaUserStore(db);
      lockouts = new SqlLockoutStore(db);
    });

    /** A user with a pending TOTP factor made at the clock's time, and its secret. */
    const enrol = async (clock: TestClock, userId?: string, d: TotpDeps = deps) => {
      const user = userId ?? (await insertUser(s.users)).id;
      const secret = newTotpSecret();
      const id = randomUUID();
      await d.store.insertPending({ id, userId: user, name: 'Authenticator app', sealedSecret: d.secrets.seal(id, secret), createdAt: iso(clock.now()), pendingUntil: iso(clock.now() + 15 * MINUTE) });
      return { userId: user, id, secret };
    };
    /** A user with a confirmed TOTP factor; the confirming code was that of the step before the clock's. */
    const enrolled = async (clock: TestClock, d: TotpDeps = deps) => {
      const f = await enrol(clock, undefined, d);
      expect(await confirmTotp(d, f.userId, f.id, totpCodeAt(f.secret, clock.now() - 30_000), 'Phone', clock.now(), 10)).toBe('confirmed');
      return f;
    };

    describe('TOTP', () => {
      it('keeps one pending factor per user: a new enrolment replaces the old, which no longer confirms', async () => {
        const clock = new TestClock();
        const first = await enrol(clock);
        const second = await enrol(clock, first.userId);
        expect(await totp.find(first.userId, first.id, iso(clock.now()))).toBeUndefined();
        expect(await totp.find(first.userId, second.id, iso(clock.now()))).toMatchObject({ status: 'pending', lastStep: null });
        expect(await confirmTotp(deps, first.userId, first.id, totpCodeAt(first.secret, clock.now()), null, clock.now(), 10)).toBe('gone');
        expect(await confirmTotp(deps, first.userId, second.id, totpCodeAt(second.secret, clock.now()), null, clock.now(), 10)).toBe('confirmed');
        expect(await factors.list(first.userId)).toEqual([expect.objectContaining({ id: second.id, type: 'totp', name: 'Authenticator app' })]);
      });

      it('parallel enrolments of one user leave exactly one pending factor', async () => {
        const clock = new TestClock();
        const user = await insertUser(s.users);
        const all = await Promise.all(Array.from({ length: 8 }, () => enrol(clock, user.id)));
        const found = await Promise.all(all.map((f) => totp.find(user.id, f.id, iso(clock.now()))));
        expect(found.filter(Boolean)).toHaveLength(1);
      });

      it('a pending factor expires after its 15 minutes, and is swept', async () => {
        const clock = new TestClock();
        const f = await enrol(clock);
        clock.advance(15 * MINUTE);
        expect(await totp.find(f.userId, f.id, iso(clock.now()))).toBeUndefined();
        expect(await confirmTotp(deps, f.userId, f.id, totpCodeAt(f.secret, clock.now()), null, clock.now(), 10)).toBe('gone');
        expect(await factors.deleteExpiredPending(iso(clock.now()))).toBeGreaterThanOrEqual(1);
        expect(await totp.find(f.userId, f.id, iso(clock.now() - 20 * MINUTE))).toBeUndefined();
      });

      it('confirmation refuses a wrong or oddly spelt code, takes a name, and holds the cap of active factors', async () => {
        const clock = new TestClock();
        const f = await enrol(clock);
        expect(await confirmTotp(deps, f.userId, f.id, '000000', null, clock.now(), 10)).toBe(totpCodeAt(f.secret, clock.now()) === '000000' ? 'confirmed' : 'mismatch');
        expect(await confirmTotp(deps, f.userId, f.id, '１２３４５６', null, clock.now(), 10)).toBe('malformed');
        const code = totpCodeAt(f.secret, clock.now());
        expect(await confirmTotp(deps, f.userId, f.id, `${code.slice(0, 3)} ${code.slice(3)}`, 'Work phone', clock.now(), 10)).toBe('confirmed');
        expect((await factors.list(f.userId))[0]?.name).toBe('Work phone');
        const next = await enrol(clock, f.userId);
        expect(await confirmTotp(deps, f.userId, next.id, totpCodeAt(next.secret, clock.now()), null, clock.now(), 1)).toBe('cap');
        expect(await confirmTotp(deps, f.userId, next.id, totpCodeAt(next.secret, clock.now()), null, clock.now(), 2)).toBe('confirmed');
      });

      it('the confirming code cannot log in afterwards: its step is the last accepted one', async () => {
        const clock = new TestClock();
        const f = await enrol(clock);
        const code = totpCodeAt(f.secret, clock.now());
        expect(await confirmTotp(deps, f.userId, f.id, code, null, clock.now(), 10)).toBe('confirmed');
        expect(await checkTotp(deps, f.userId, code, clock.now())).toEqual({ ok: false, reason: 'replayed' });
      });

      it('accepts a code once: the same code again in its step is a replay (RFC 6238 §5.2)', async () => {
        const clock = new TestClock();
        const f = await enrolled(clock);
        const code = totpCodeAt(f.secret, clock.now());
        expect(await checkTotp(deps, f.userId, code, clock.now())).toEqual({ ok: true, factorId: f.id });
        clock.advance(5_000);
        expect(await checkTotp(deps, f.userId, code, clock.now())).toEqual({ ok: false, reason: 'replayed' });
        // An earlier step's code is refused once a later one was accepted, though within the window.
        expect(await checkTotp(deps, f.userId, totpCodeAt(f.secret, clock.now() - 30_000), clock.now())).toEqual({ ok: false, reason: 'replayed' });
        clock.advance(30_000);
        expect(await checkTotp(deps, f.userId, totpCodeAt(f.secret, clock.now()), clock.now())).toEqual({ ok: true, factorId: f.id });
      });

      it('of two parallel uses of one code exactly one wins', async () => {
        const clock = new TestClock();
        const f = await enrolled(clock);
        const code = totpCodeAt(f.secret, clock.now());
        const results = await Promise.all([checkTotp(deps, f.userId, code, clock.now()), checkTotp(deps, f.userId, code, clock.now())]);
        expect(results.filter((r) => r.ok)).toHaveLength(1);
        expect(results.filter((r) => !r.ok)).toEqual([{ ok: false, reason: 'replayed' }]);
      });

      it('the step compare-and-set admits one of many parallel writers of one step', async () => {
        const clock = new TestClock();
        const f = await enrolled(clock);
        const step = Math.floor(clock.now() / 30_000) + 1;
        const won = await Promise.all(Array.from({ length: 20 }, () => totp.acceptStep(f.id, step, iso(clock.now()))));
        expect(won.filter(Boolean)).toHaveLength(1);
        expect((await totp.find(f.userId, f.id, iso(clock.now())))?.lastStep).toBe(step);
      });

      it('refuses codes outside T−1…T+1, odd spellings, and codes of another user', async () => {
        const clock = new TestClock();
        const f = await enrolled(clock);
        const other = await enrolled(clock);
        for (const delta of [-2, 2]) expect(await checkTotp(deps, f.userId, totpCodeAt(f.secret, clock.now() + delta * 30_000), clock.now())).toEqual({ ok: false, reason: 'mismatch' });
        const code = totpCodeAt(f.secret, clock.now());
        for (const odd of [`+${code}`, code.slice(1), `${code}0`, code.replace(/\d/g, (d) => String.fromCharCode(0xff10 + Number(d)))]) {
          expect(await checkTotp(deps, f.userId, odd, clock.now())).toEqual({ ok: false, reason: 'malformed' });
        }
        expect(await checkTotp(deps, other.userId, code, clock.now())).toMatchObject({ ok: false });
        expect(await checkTotp(deps, f.userId, `${code.slice(0, 2)} ${code.slice(2, 4)} ${code.slice(4)}`, clock.now())).toEqual({ ok: true, factorId: f.id });
      });

      it('stores the secret as ciphertext, and seals it again under the new key on use after a rotation', async () => {
        const clock = new TestClock();
        const before = newKey();
        const old: TotpDeps = { store: totp, secrets: new TotpSecrets({ current: before, old: null }) };
        const f = await enrolled(clock, old);
        const stored = async () => (await s.database.db.selectFrom('mfa_factors').select('totp_secret').where('id', '=', f.id).executeTakeFirstOrThrow()).totp_secret ?? '';
        const sealed = await stored();
        expect(sealed).toMatch(/^sealed:v1:/);
        expect(sealed).not.toContain(f.secret);
        const rotated: TotpDeps = { store: totp, secrets: new TotpSecrets({ current: newKey(), old: before }) };
        expect(rotated.secrets.stale(sealed)).toBe(true);
        expect(await checkTotp(rotated, f.userId, totpCodeAt(f.secret, clock.now()), clock.now())).toEqual({ ok: true, factorId: f.id });
        const resealed = await stored();
        expect(rotated.secrets.stale(resealed)).toBe(false);
        expect(rotated.secrets.open(f.id, resealed)).toBe(f.secret);
      });
    });

    describe('TOTP secrets at start-up', () => {
      const own = useStores(harness);

      it('are all opened; those under the old key are sealed again; one no key opens refuses the start', async () => {
        const clock = new TestClock();
        const [before, after] = [newKey(), newKey()];
        const store = new SqlTotpStore(own.database.db);
        const old: TotpDeps = { store, secrets: new TotpSecrets({ current: before, old: null }) };
        const user = await insertUser(own.users);
        const id = randomUUID();
        const secret = newTotpSecret();
        await store.insertPending({ id, userId: user.id, name: 'app', sealedSecret: old.secrets.seal(id, secret), createdAt: iso(clock.now()), pendingUntil: iso(clock.now() + MINUTE) });
        expect(await resealTotpSecrets(store, old.secrets)).toBe(0);
        const rotated = new TotpSecrets({ current: after, old: before });
        expect(await resealTotpSecrets(store, rotated)).toBe(1);
        expect(await resealTotpSecrets(store, rotated)).toBe(0);
        const [row] = await store.listSealed();
        expect(rotated.stale(row?.sealedSecret ?? '')).toBe(false);
        expect(new TotpSecrets({ current: after, old: null }).open(id, row?.sealedSecret ?? '')).toBe(secret);
        await expect(resealTotpSecrets(store, new TotpSecrets({ current: before, old: null }))).rejects.toThrow(UnsealError);
        await expect(resealTotpSecrets(store, new TotpSecrets({ current: null, old: null }))).rejects.toThrow(/MFA_ENCRYPTION_KEY/);
      });
    });

    describe('recovery codes', () => {
      const setFor = async () => {
        const user = await insertUser(s.users);
        const codes = newRecoveryCodes();
        const digests = recoveryCodeDigests(codes);
        await recovery.replace(user.id, digests, iso(0));
        return { userId: user.id, codes, digests };
      };

      it('keeps ten SHA-256 digests, never a code, and each works once', async () => {
        const { userId, codes, digests } = await setFor();
        expect(await recovery.remaining(userId)).toBe(10);
        const rows = await s.database.db.selectFrom('mfa_recovery_codes').select('digest').where('user_id', '=', userId).execute();
        expect(rows.map((r) => r.digest).sort()).toEqual(codes.map((c) => createHash('sha256').update(c.replaceAll('-', '')).digest('hex')).sort());
        expect(await recovery.consume(userId, digests[0] ?? '')).toBe(true);
        expect(await recovery.consume(userId, digests[0] ?? '')).toBe(false);
        expect(await recovery.remaining(userId)).toBe(9);
      });

      it('a code works for its own user only', async () => {
        const [a, b] = [await setFor(), await setFor()];
        expect(await recovery.consume(b.userId, a.digests[0] ?? '')).toBe(false);
        expect(await recovery.remaining(a.userId)).toBe(10);
      });

      it('of 20 parallel uses of one code exactly one succeeds', async () => {
        const { userId, digests } = await setFor();
        const results = await Promise.all(Array.from({ length: 20 }, () => recovery.consume(userId, digests[3] ?? '')));
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(await recovery.remaining(userId)).toBe(9);
      });

      it('a new set replaces the old one, also when two are made at once', async () => {
        const { userId, digests } = await setFor();
        const [x, y] = [recoveryCodeDigests(newRecoveryCodes()), recoveryCodeDigests(newRecoveryCodes())];
        await Promise.all([recovery.replace(userId, x, iso(1)), recovery.replace(userId, y, iso(1))]);
        expect(await recovery.consume(userId, digests[0] ?? '')).toBe(false);
        expect(await recovery.remaining(userId)).toBe(10);
      });
    });

    describe('WebAuthn credentials', () => {
      const credential = (userId: string, o: Partial<NewWebAuthnCredential> = {}): NewWebAuthnCredential => ({
        id: randomUUID(),
        userId,
        name: 'Security key',
        credentialId: randomBytes(16).toString('base64url'),
        publicKey: randomBytes(77).toString('base64url'),
        signCount: 0,
        transports: ['usb', 'nfc'],
        backupEligible: false,
        backupState: false,
        discoverable: true,
        userVerified: true,
        createdAt: iso(0),
        ...o,
      });

      it('registers a credential id once across every user, within the per-user cap', async () => {
        const [a, b] = [await insertUser(s.users), await insertUser(s.users)];
        const c = credential(a.id, { signCount: 2 ** 32 - 1 });
        expect(await webauthn.insert(c, 20)).toBe('inserted');
        expect(await webauthn.insert(credential(b.id, { credentialId: c.credentialId }), 20)).toBe('duplicate');
        expect(await webauthn.insert(credential(a.id), 1)).toBe('cap');
        expect(await webauthn.insert(credential(randomUUID()), 20)).toBe('gone');
        expect(await webauthn.findByCredentialId(c.credentialId)).toEqual({ ...c, lastUsedAt: null, cloneSuspectedAt: null });
        expect(await webauthn.listForUser(b.id)).toEqual([]);
      });

      it('parallel registrations hold the cap', async () => {
        const user = await insertUser(s.users);
        const outcomes = await Promise.all(Array.from({ length: 10 }, () => webauthn.insert(credential(user.id), 3)));
        expect(outcomes.filter((o) => o === 'inserted')).toHaveLength(3);
        expect(await webauthn.listForUser(user.id)).toHaveLength(3);
      });

      it('accepts a growing counter, and two zeros; a counter that does not grow is a suspected clone', async () => {
        const user = await insertUser(s.users);
        const synced = credential(user.id, { backupEligible: true, backupState: true });
        const key = credential(user.id, { signCount: 5 });
        await webauthn.insert(synced, 20);
        await webauthn.insert(key, 20);
        expect(await webauthn.recordAssertion(synced.id, { signCount: 0, backupState: true, at: iso(10) })).toBe('accepted');
        expect(await webauthn.recordAssertion(key.id, { signCount: 6, backupState: false, at: iso(11) })).toBe('accepted');
        expect(await webauthn.findByCredentialId(key.credentialId)).toMatchObject({ signCount: 6, lastUsedAt: iso(11), cloneSuspectedAt: null });
        expect(await webauthn.recordAssertion(key.id, { signCount: 6, backupState: false, at: iso(12) })).toBe('clone_suspected');
        expect(await webauthn.recordAssertion(key.id, { signCount: 0, backupState: false, at: iso(13) })).toBe('clone_suspected');
        expect(await webauthn.findByCredentialId(key.credentialId)).toMatchObject({ signCount: 6, lastUsedAt: iso(11), cloneSuspectedAt: iso(12) });
        expect(await webauthn.recordAssertion(randomUUID(), { signCount: 1, backupState: false, at: iso(14) })).toBe('gone');
      });

      it('of parallel assertions carrying one counter exactly one is accepted', async () => {
        const user = await insertUser(s.users);
        const key = credential(user.id, { signCount: 5 });
        await webauthn.insert(key, 20);
        const outcomes = await Promise.all(Array.from({ length: 10 }, () => webauthn.recordAssertion(key.id, { signCount: 9, backupState: false, at: iso(20) })));
        expect(outcomes.filter((o) => o === 'accepted')).toHaveLength(1);
        expect(outcomes.filter((o) => o === 'clone_suspected')).toHaveLength(9);
      });

      it('lists factors of both kinds without secrets or keys, and shows passkey and synced', async () => {
        const clock = new TestClock();
        const f = await enrolled(clock);
        const passkey = credential(f.userId, { backupEligible: true, createdAt: iso(clock.now() + 1) });
        const key = credential(f.userId, { discoverable: null, createdAt: iso(clock.now() + 2) });
        await webauthn.insert(passkey, 20);
        await webauthn.insert(key, 20);
        const list = await factors.list(f.userId);
        expect(list.map((x) => [x.id, x.type, x.passkey, x.synced])).toEqual([
          [f.id, 'totp', false, false],
          [passkey.id, 'webauthn', true, true],
          [key.id, 'webauthn', false, false],
        ]);
        expect(JSON.stringify(list)).not.toContain(passkey.publicKey);
        expect(JSON.stringify(list)).not.toContain('sealed:');
      });
    });

    describe('factors', () => {
      it('renames and removes only the owner’s, and keeps the last one when asked to', async () => {
        const clock = new TestClock();
        const f = await enrolled(clock);
        const other = await insertUser(s.users);
        expect(await factors.rename(other.id, f.id, 'x')).toBe(false);
        expect(await factors.rename(f.userId, f.id, 'Old phone')).toBe(true);
        expect(await factors.hasActive(f.userId)).toBe(true);
        expect(await factors.remove(other.id, f.id, false)).toBe('absent');
        expect(await factors.remove(f.userId, f.id, true)).toBe('last');
        const second = await enrolled(clock);
        expect(await factors.remove(second.userId, randomUUID(), false)).toBe('absent');
        expect(await factors.remove(f.userId, f.id, false)).toBe('removed');
        expect(await factors.hasActive(f.userId)).toBe(false);
      });

      it('two parallel removals while MFA is required leave one factor', async () => {
        const clock = new TestClock();
        const f = await enrolled(clock);
        const next = await enrol(clock, f.userId);
        expect(await confirmTotp(deps, f.userId, next.id, totpCodeAt(next.secret, clock.now()), null, clock.now(), 10)).toBe('confirmed');
        const outcomes = await Promise.all([factors.remove(f.userId, f.id, true), factors.remove(f.userId, next.id, true)]);
        expect(outcomes.sort()).toEqual(['last', 'removed']);
        expect(await factors.list(f.userId)).toHaveLength(1);
      });

      it('the operator reset removes every factor, recovery code, waiting login and lock-out of the user only', async () => {
        const clock = new TestClock();
        const f = await enrolled(clock);
        const other = await enrolled(clock);
        await recovery.replace(f.userId, recoveryCodeDigests(newRecoveryCodes()), iso(0));
        await logins.insert({ digest: randomUUID(), userId: f.userId, createdAt: iso(clock.now()), expiresAt: iso(clock.now() + 5 * MINUTE) });
        await lockouts.reserve(f.userId, clock.now(), MINUTE, 1);
        expect(await lockouts.reserve(f.userId, clock.now(), MINUTE, 1)).toHaveProperty('lockedUntil');
        expect(await factors.removeAll(f.userId)).toBe(1);
        expect(await lockouts.reserve(f.userId, clock.now(), MINUTE, 1)).toMatchObject({ attempts: 1 });
        expect(await factors.list(f.userId)).toEqual([]);
        expect(await recovery.remaining(f.userId)).toBe(0);
        expect(await s.database.db.selectFrom('mfa_pending_logins').select('digest').where('user_id', '=', f.userId).execute()).toEqual([]);
        expect(await factors.hasActive(other.userId)).toBe(true);
      });
    });

    describe('WebAuthn challenges', () => {
      const issue = async (userId: string | null, purpose: 'register' | 'passkey_login' = 'register', expiresAt = iso(5 * MINUTE)) => {
        const c = { id: randomUUID(), purpose, userId, challenge: randomBytes(32).toString('base64url'), expiresAt };
        await challenges.insert(c);
        return c;
      };

      it('is taken once, by its own purpose and user, before it expires; any attempt deletes it', async () => {
        const [a, b] = [await insertUser(s.users), await insertUser(s.users)];
        const c = await issue(a.id);
        expect(await challenges.take(c.id, 'register', a.id, iso(0))).toEqual(c);
        expect(await challenges.take(c.id, 'register', a.id, iso(0))).toBeUndefined();
        for (const [purpose, user] of [['reauth', a.id], ['register', b.id], ['register', null]] as const) {
          const d = await issue(a.id);
          expect(await challenges.take(d.id, purpose, user, iso(0))).toBeUndefined();
          expect(await challenges.take(d.id, 'register', a.id, iso(0))).toBeUndefined();
        }
        const late = await issue(null, 'passkey_login');
        expect(await challenges.take(late.id, 'passkey_login', null, iso(5 * MINUTE))).toBeUndefined();
      });

      it('of parallel ceremonies one takes it; expired ones are swept', async () => {
        const c = await issue(null, 'passkey_login');
        const taken = await Promise.all(Array.from({ length: 10 }, () => challenges.take(c.id, 'passkey_login', null, iso(0))));
        expect(taken.filter(Boolean)).toHaveLength(1);
        await issue(null, 'passkey_login', iso(1));
        expect(await challenges.deleteExpired(iso(2))).toBeGreaterThanOrEqual(1);
      });
    });

    describe('waiting logins (mfa_token)', () => {
      const wait = async () => {
        const user = await insertUser(s.users);
        const digest = createHash('sha256').update(randomBytes(32)).digest('base64url');
        await logins.insert({ digest, userId: user.id, createdAt: iso(0), expiresAt: iso(5 * MINUTE) });
        return { userId: user.id, digest };
      };

      it('allow five attempts, then none, and die after five minutes', async () => {
        const { userId, digest } = await wait();
        for (let i = 0; i < 5; i++) expect(await logins.reserveAttempt(digest, iso(0), 5)).toEqual({ userId });
        expect(await logins.reserveAttempt(digest, iso(0), 5)).toBeUndefined();
        const fresh = await wait();
        expect(await logins.reserveAttempt(fresh.digest, iso(5 * MINUTE), 5)).toBeUndefined();
        expect(await logins.reserveAttempt('unknown', iso(0), 5)).toBeUndefined();
        expect(await logins.deleteExpired(iso(5 * MINUTE))).toBeGreaterThanOrEqual(2);
      });

      it('names the holder of a live token without spending an attempt; none once expired, spent or unknown', async () => {
        const { userId, digest } = await wait();
        for (let i = 0; i < 7; i++) expect(await logins.holder(digest, iso(0), 5)).toBe(userId);
        expect(await logins.holder(digest, iso(5 * MINUTE), 5)).toBeUndefined();
        for (let i = 0; i < 5; i++) await logins.reserveAttempt(digest, iso(0), 5);
        expect(await logins.holder(digest, iso(0), 5)).toBeUndefined();
        expect(await logins.holder('unknown', iso(0), 5)).toBeUndefined();
      });

      it('of 50 parallel attempts exactly five get a comparison, and the token is consumed once', async () => {
        const { digest } = await wait();
        const reserved = await Promise.all(Array.from({ length: 50 }, () => logins.reserveAttempt(digest, iso(0), 5)));
        expect(reserved.filter(Boolean)).toHaveLength(5);
        const consumed = await Promise.all(Array.from({ length: 5 }, () => logins.consume(digest)));
        expect(consumed.filter(Boolean)).toHaveLength(1);
      });
    });

    describe('per-user lock-out', () => {
      const WINDOW = 15 * MINUTE;

      it('admits ten attempts in 15 minutes, then refuses until the window has passed', async () => {
        const clock = new TestClock();
        const user = await insertUser(s.users);
        const start = clock.now();
        for (let i = 1; i <= 10; i++) {
          expect(await lockouts.reserve(user.id, clock.now(), WINDOW, 10)).toEqual({ windowStart: iso(start), attempts: i });
          clock.advance(1000);
        }
        expect(await lockouts.reserve(user.id, clock.now(), WINDOW, 10)).toEqual({ lockedUntil: iso(start + WINDOW) });
        clock.advance(WINDOW - 11_000);
        expect(await lockouts.reserve(user.id, clock.now(), WINDOW, 10)).toEqual({ lockedUntil: iso(start + WINDOW) });
        clock.advance(1000);
        expect(await lockouts.reserve(user.id, clock.now(), WINDOW, 10)).toEqual({ windowStart: iso(clock.now()), attempts: 1 });
        // Another user is not affected.
        expect(await lockouts.reserve((await insertUser(s.users)).id, clock.now(), WINDOW, 10)).toMatchObject({ attempts: 1 });
      });

      it('gives an attempt back after a success, within its own window only', async () => {
        const clock = new TestClock();
        const user = await insertUser(s.users);
        const first = await lockouts.reserve(user.id, clock.now(), WINDOW, 10);
        if (!('attempts' in first)) throw new Error('locked');
        await lockouts.release(user.id, first);
        expect(await lockouts.reserve(user.id, clock.now(), WINDOW, 10)).toMatchObject({ attempts: 1 });
        clock.advance(WINDOW);
        const fresh = await lockouts.reserve(user.id, clock.now(), WINDOW, 10);
        await lockouts.release(user.id, first);
        expect(fresh).toMatchObject({ attempts: 1 });
        expect(await lockouts.reserve(user.id, clock.now(), WINDOW, 10)).toMatchObject({ attempts: 2 });
      });

      it('of 50 parallel attempts exactly the limit is reserved', async () => {
        const clock = new TestClock();
        const user = await insertUser(s.users);
        const results = await Promise.all(Array.from({ length: 50 }, () => lockouts.reserve(user.id, clock.now(), WINDOW, 10)));
        expect(results.filter((r) => 'attempts' in r)).toHaveLength(10);
        expect(new Set(results.filter((r) => 'attempts' in r).map((r) => ('attempts' in r ? r.attempts : 0))).size).toBe(10);
      });
    });

    describe('per-user state', () => {
      it('gives one WebAuthn user handle per user, also to parallel first ceremonies', async () => {
        const user = await insertUser(s.users);
        const handles = await Promise.all(Array.from({ length: 8 }, () => mfaUsers.userHandle(user.id, randomBytes(32).toString('base64url'))));
        expect(new Set(handles).size).toBe(1);
        expect(await mfaUsers.userByHandle(handles[0] ?? '')).toBe(user.id);
        expect(await mfaUsers.userByHandle(randomBytes(32).toString('base64url'))).toBeUndefined();
      });

      it('records when MFA_REQUIRED first applied, once', async () => {
        const user = await insertUser(s.users);
        expect(await mfaUsers.requiredSince(user.id, iso(1))).toBe(iso(1));
        expect(await mfaUsers.requiredSince(user.id, iso(99))).toBe(iso(1));
        await mfaUsers.userHandle(user.id, 'h');
        expect(await mfaUsers.requiredSince(user.id, iso(99))).toBe(iso(1));
      });
    });
  });
}
