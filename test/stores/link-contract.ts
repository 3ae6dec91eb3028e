import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { consumeLinkToken, deleteLinks } from '../../src/account/link-store.js';
import { linkDigest, LinkTokens } from '../../src/account/links.js';
import { enqueueMail, type LinkPurpose, supersedeMails } from '../../src/mail/outbox.js';
import { TestClock } from '../helpers/clock.js';
import { at, insertUser, type StoreHarness, useStores } from './fixture.js';

/**
 * Link tokens on every database (contract §11.3, docs/email.md): only a SHA-256 digest is stored,
 * a token is single use under any concurrency, bound to its purpose, dead once expired, and dead
 * once a newer mail of its user and purpose exists ("the old link dies").
 */
export function linkStoreContract(name: string, harness: () => StoreHarness): void {
  describe(`link token contract: ${name}`, () => {
    const s = useStores(harness);
    const HOUR = 3_600_000;
    const links = () => new LinkTokens({ verify_email: 48 * HOUR, reset_password: HOUR / 2, change_email: 48 * HOUR }, new TestClock(Date.parse(at(5))));
    const t = (n: number) => Date.parse(at(n));

    async function linkMail(purpose: LinkPurpose = 'reset_password', n = 1) {
      const user = await insertUser(s.users);
      const id = await enqueueMail(s.database.db, { userId: user.id, recipient: user.email, template: 'reset_password', data: {}, linkPurpose: purpose }, t(n));
      return { user, mail: { id, userId: user.id, purpose, recipient: user.email, createdAt: at(n) } };
    }
    const consume = (token: string, purpose: LinkPurpose, now = at(10)) =>
      s.database.db.transaction().execute((trx) => consumeLinkToken(trx, linkDigest(token) ?? '', purpose, now));

    it('mints rzl_ and 256 bits of base64url, and stores its SHA-256 digest alone', async () => {
      const { user, mail } = await linkMail();
      const token = await links().mint(s.database.db, mail);
      expect(token).toMatch(/^rzl_[A-Za-z0-9_-]{43}$/);
      const rows = await s.database.db.selectFrom('link_tokens').selectAll().where('user_id', '=', user.id).execute();
      expect(rows).toEqual([
        { digest: createHash('sha256').update(token ?? '').digest('hex'), user_id: user.id, purpose: 'reset_password', mail_id: mail.id, email: user.email, created_at: at(5), expires_at: new Date(t(1) + 1_800_000).toISOString() },
      ]);
      expect(JSON.stringify(rows)).not.toContain(token?.slice(4));
    });

    it('is consumed once, bound to its user, mail and address', async () => {
      const { user, mail } = await linkMail();
      const token = (await links().mint(s.database.db, mail)) ?? '';
      expect(await consume(token, 'reset_password')).toEqual({ userId: user.id, mailId: mail.id, email: user.email });
      expect(await consume(token, 'reset_password')).toBeNull();
    });

    it('of another purpose is refused and stays usable for its own', async () => {
      const { user, mail } = await linkMail('verify_email');
      const token = (await links().mint(s.database.db, mail)) ?? '';
      expect(await consume(token, 'reset_password')).toBeNull();
      expect(await consume(token, 'change_email')).toBeNull();
      expect(await consume(token, 'verify_email')).toMatchObject({ userId: user.id });
    });

    it('expires counted from its mail\'s creation', async () => {
      const { mail } = await linkMail('reset_password', 1);
      const token = (await links().mint(s.database.db, mail)) ?? '';
      expect(await consume(token, 'reset_password', new Date(t(1) + 1_800_000).toISOString())).toBeNull();
      expect(await consume(token, 'reset_password', new Date(t(1) + 1_799_999).toISOString())).not.toBeNull();
    });

    it('dies when a newer mail of its user and purpose exists, even minted before it', async () => {
      const { user, mail } = await linkMail();
      const old = (await links().mint(s.database.db, mail)) ?? '';
      const newer = await enqueueMail(s.database.db, { userId: user.id, recipient: user.email, template: 'reset_password', data: {}, linkPurpose: 'reset_password' }, t(2));
      // The old mail, still pending (a retry), gets no new link either.
      expect(await links().mint(s.database.db, mail)).toBeNull();
      expect(await consume(old, 'reset_password')).toBeNull();
      const fresh = (await links().mint(s.database.db, { ...mail, id: newer, createdAt: at(2) })) ?? '';
      expect(await consume(fresh, 'reset_password')).toMatchObject({ mailId: newer });
    });

    it('is not minted for a superseded mail or a mail of a deleted user; deleting a user deletes their links', async () => {
      const { user, mail } = await linkMail();
      const token = (await links().mint(s.database.db, mail)) ?? '';
      await supersedeMails(s.database.db, user.id, 'reset_password');
      expect(await links().mint(s.database.db, mail)).toBeNull();
      const other = await linkMail();
      await links().mint(s.database.db, other.mail);
      await s.users.delete(other.user.id, at(3));
      expect(await s.database.db.selectFrom('link_tokens').select('digest').where('user_id', '=', other.user.id).execute()).toEqual([]);
      expect(await links().mint(s.database.db, other.mail)).toBeNull();
      await deleteLinks(s.database.db, user.id, 'reset_password');
      expect(await consume(token, 'reset_password')).toBeNull();
    });

    it('consuming one kills every other token of its user and purpose (a retried mail minted twice)', async () => {
      const { mail } = await linkMail();
      const first = (await links().mint(s.database.db, mail)) ?? '';
      const second = (await links().mint(s.database.db, mail)) ?? '';
      expect(first).not.toBe(second);
      expect(await consume(second, 'reset_password')).not.toBeNull();
      expect(await consume(first, 'reset_password')).toBeNull();
    });

    it('of 20 parallel consumptions, exactly one succeeds', async () => {
      const { mail } = await linkMail();
      const token = (await links().mint(s.database.db, mail)) ?? '';
      const results = await Promise.all(Array.from({ length: 20 }, () => consume(token, 'reset_password')));
      expect(results.filter((r) => r !== null)).toHaveLength(1);
    });

    it('never looks up a string that is not a link token', () => {
      for (const bad of ['', 'rzl_', 'rzl_short', `rz_${'a'.repeat(43)}`, `rzl_${'a'.repeat(42)}!`, `rzl_${'a'.repeat(44)}`]) expect(linkDigest(bad)).toBeNull();
    });
  });
}
