import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { auditEvent, SYSTEM_CONTEXT } from '../../src/audit/events.js';
import { enqueueMail, type NewMail, supersedeMails } from '../../src/mail/outbox.js';
import { type MailOutcome, MailQueue } from '../../src/mail/queue.js';
import { at, insertUser, type StoreHarness, useStores } from './fixture.js';

/**
 * The mail outbox on every database (contract §11.3): a mail written with the transaction of its
 * change, leased to one worker at a time, recorded only under that lease, a user's mails in outbox
 * order, superseded links dropped, and the operator's list.
 */
export function mailStoreContract(name: string, harness: () => StoreHarness): void {
  describe(`mail outbox contract: ${name}`, () => {
    const s = useStores(harness);
    const queue = () => new MailQueue(s.database.db);
    const t = (n: number) => Date.parse(at(n));
    const mail = (userId: string | null, o: Partial<NewMail> = {}): NewMail => ({ userId, recipient: 'ada@example.com', template: 'password_changed', data: { username: 'ada' }, ...o });
    const outcome = (o: Partial<MailOutcome> = {}): MailOutcome => ({ attemptedAt: at(20), status: 'pending', error: '421 try later', nextAttemptAt: at(30), ...o });
    /** Sends (records as sent) whatever earlier tests left due, so each test sees only its own mails. */
    const drain = async () => {
      for (let claimed = await queue().claimDue(at(3600), at(3601), 'drain', 100); claimed.length > 0; claimed = await queue().claimDue(at(3600), at(3601), 'drain', 100)) {
        for (const m of claimed) await queue().recordAttempt(m.id, 'drain', outcome({ status: 'sent', error: null, nextAttemptAt: null }));
      }
    };

    it('writes a mail with the transaction of its change: rolled back with it, due at once when committed', async () => {
      await drain();
      const user = await insertUser(s.users);
      await expect(
        s.database.db.transaction().execute(async (trx) => {
          await enqueueMail(trx, mail(user.id), t(1));
          throw new Error('the change failed');
        }),
      ).rejects.toThrow('the change failed');
      expect(await queue().claimDue(at(1), at(60), 'a', 10)).toEqual([]);
      const id = await s.database.db.transaction().execute((trx) => enqueueMail(trx, mail(user.id, { template: 'reset_password', linkPurpose: 'reset_password', data: { username: 'a<b>' } }), t(1)));
      expect(await queue().claimDue(at(0), at(60), 'a', 10)).toEqual([]);
      const [claimed] = await queue().claimDue(at(1), at(60), 'a', 10);
      expect(claimed).toEqual({ id, userId: user.id, recipient: 'ada@example.com', template: 'reset_password', data: { username: 'a<b>' }, linkPurpose: 'reset_password', createdAt: at(1), attempts: 0, leaseToken: 'a' });
    });

    it('refuses a recipient that is not one plain mailbox, and a link mail without its link purpose (or a notice with one)', async () => {
      for (const recipient of ['a@x.com\r\nBcc: b@y.com', 'a,b@x.com', 'a<b@x.com>', '"a" <a@x.com>', 'a@x.com b@y.com', 'ax.com']) {
        await expect(enqueueMail(s.database.db, mail(null, { recipient }), t(1))).rejects.toThrow(/plain mailbox/);
      }
      await expect(enqueueMail(s.database.db, mail(null, { template: 'reset_password' }), t(1))).rejects.toThrow(/link purpose reset_password/);
      await expect(enqueueMail(s.database.db, mail(null, { template: 'verify_email', linkPurpose: 'reset_password' }), t(1))).rejects.toThrow(/link purpose/);
      await expect(enqueueMail(s.database.db, mail(null, { linkPurpose: 'reset_password' }), t(1))).rejects.toThrow(/link purpose/);
    });

    it('leases a due mail to one claim at a time; a lapsed lease frees it; only the holder records', async () => {
      await drain();
      const id = await enqueueMail(s.database.db, mail(null), t(2));
      const racing = await Promise.all([queue().claimDue(at(2), at(10), 'one', 10), queue().claimDue(at(2), at(10), 'two', 10)]);
      expect(racing.flat().map((m) => m.id)).toEqual([id]);
      const [winner] = racing.flat();
      const loser = winner?.leaseToken === 'one' ? 'two' : 'one';
      expect(await queue().claimDue(at(9), at(20), 'three', 10)).toEqual([]);
      expect(await queue().recordAttempt(id, loser, outcome())).toBe(false);
      // The first worker died: its lease lapses and another takes the mail.
      expect((await queue().claimDue(at(10), at(20), 'three', 10)).map((m) => m.id)).toEqual([id]);
      expect(await queue().recordAttempt(id, 'one', outcome())).toBe(false);
      expect(await queue().recordAttempt(id, 'three', outcome({ nextAttemptAt: at(30) }))).toBe(true);
      expect(await queue().claimDue(at(29), at(40), 'four', 10)).toEqual([]);
      expect(await queue().claimDue(at(30), at(40), 'four', 10)).toMatchObject([{ id, attempts: 1 }]);
    });

    it("sends a user's mails one at a time in outbox order, even while the first waits for a retry; other users and nobody's mails pass", async () => {
      await drain();
      const [a, b] = [await insertUser(s.users), await insertUser(s.users)];
      const first = await enqueueMail(s.database.db, mail(a.id), t(3));
      const second = await enqueueMail(s.database.db, mail(a.id), t(3));
      const other = await enqueueMail(s.database.db, mail(b.id), t(3));
      const nobodys = await enqueueMail(s.database.db, mail(null), t(3));
      expect((await queue().claimDue(at(3), at(10), 'x', 10)).map((m) => m.id).sort()).toEqual([first, other, nobodys].sort());
      expect(await queue().recordAttempt(first, 'x', outcome({ attemptedAt: at(4), nextAttemptAt: at(50) }))).toBe(true);
      for (const id of [other, nobodys]) expect(await queue().recordAttempt(id, 'x', outcome({ status: 'sent', error: null, nextAttemptAt: null }))).toBe(true);
      expect(await queue().claimDue(at(11), at(20), 'y', 10)).toEqual([]);
      expect(await queue().recordAttempt(first, 'z', outcome())).toBe(false);
      expect((await queue().claimDue(at(50), at(60), 'y', 10)).map((m) => m.id)).toEqual([first]);
      expect(await queue().recordAttempt(first, 'y', outcome({ status: 'sent', error: null, nextAttemptAt: null }))).toBe(true);
      expect((await queue().claimDue(at(50), at(60), 'w', 10)).map((m) => m.id)).toEqual([second]);
    });

    it("supersedes only the user's pending mails of that purpose; a superseded mail is never claimed", async () => {
      await drain();
      const [a, b] = [await insertUser(s.users), await insertUser(s.users)];
      const old = await enqueueMail(s.database.db, mail(a.id, { template: 'reset_password', linkPurpose: 'reset_password' }), t(5));
      const verify = await enqueueMail(s.database.db, mail(a.id, { template: 'verify_email', linkPurpose: 'verify_email' }), t(5));
      const others = await enqueueMail(s.database.db, mail(b.id, { template: 'reset_password', linkPurpose: 'reset_password' }), t(5));
      await s.database.db.transaction().execute((trx) => supersedeMails(trx, a.id, 'reset_password'));
      const fresh = await enqueueMail(s.database.db, mail(a.id, { template: 'reset_password', linkPurpose: 'reset_password' }), t(6));
      expect((await queue().claimDue(at(6), at(10), 'x', 10)).map((m) => m.id).sort()).toEqual([verify, others].sort());
      expect((await queue().list('superseded', 10)).map((m) => m.id)).toEqual([old]);
      expect((await queue().list('pending', 10)).map((m) => m.id)).toContain(fresh);
    });

    it('gives up with its mail.failed event in one transaction, lists by status newest first, counts and prunes', async () => {
      await drain();
      const user = await insertUser(s.users);
      const id = await enqueueMail(s.database.db, mail(user.id), t(7));
      const sent = await enqueueMail(s.database.db, mail(null, { recipient: 'bob@example.com' }), t(7));
      expect(await queue().pending(10)).toBe(2);
      expect(await queue().pending(1)).toBe(1);
      await queue().claimDue(at(7), at(10), 'x', 10);
      const failed = auditEvent({ type: 'mail.failed', userId: user.id, subject: { type: 'user', id: user.id }, details: { template: 'password_changed' } }, SYSTEM_CONTEXT, t(8));
      expect(await queue().recordAttempt(id, 'x', outcome({ attemptedAt: at(8), status: 'failed', error: '550 no such user', nextAttemptAt: null }), failed)).toBe(true);
      expect(await queue().recordAttempt(sent, 'x', outcome({ attemptedAt: at(8), status: 'sent', error: null, nextAttemptAt: null }))).toBe(true);
      expect((await s.audit.list({ userId: user.id, limit: 1 }))[0]).toMatchObject({ id: failed.id, type: 'mail.failed' });
      expect(await queue().list('failed', 10)).toMatchObject([{ id, recipient: 'ada@example.com', template: 'password_changed', status: 'failed', attempts: 1, lastError: '550 no such user', sentAt: null }]);
      expect((await queue().list(undefined, 2)).map((m) => m.id)).toEqual([sent, id]);
      expect(await queue().list('sent', 1)).toMatchObject([{ id: sent, sentAt: at(8) }]);
      expect(await queue().list('pending', 10)).toEqual([]);
      expect(await queue().pending(10)).toBe(0);
      const waiting = await enqueueMail(s.database.db, mail(null), t(1));
      expect(await queue().pruneFinished(at(0))).toBe(0);
      expect(await queue().pruneFinished(at(21))).toBeGreaterThanOrEqual(2);
      expect((await queue().list(undefined, 100)).map((m) => m.id)).toEqual([waiting]);
    });

    it("takes a user's mails with the user", async () => {
      await drain();
      const user = await insertUser(s.users);
      await enqueueMail(s.database.db, mail(user.id), t(9));
      await s.database.db.deleteFrom('users').where('id', '=', user.id).execute();
      expect(await queue().claimDue(at(9), at(10), randomUUID(), 10)).toEqual([]);
    });
  });
}
