import { type Kysely, sql, type Transaction } from 'kysely';
import type { LinkTokensTable } from '../db/mail-tables.js';
import type { Tables } from '../db/tables.js';

type LinkPurpose = LinkTokensTable['purpose'];

type Executor = Kysely<Tables> | Transaction<Tables>;

/** The mail a link token is minted for, as the worker hands it over. */
export interface LinkMail {
  readonly id: string;
  readonly userId: string;
  readonly purpose: LinkPurpose;
  readonly recipient: string;
}

/** What a consumed link token was bound to. */
export interface ConsumedLink {
  readonly userId: string;
  readonly mailId: string;
  readonly email: string;
}

/**
 * Stores the digest of a new link token for `mail`, only while the mail is still pending or being
 * sent and no newer mail of its user and purpose exists (one statement, so a request for a new
 * link committing meanwhile is seen either before, and nothing is stored, or after, and it deletes
 * what was stored). False when the mail no longer deserves a link.
 */
export async function insertLinkToken(db: Executor, digest: string, mail: LinkMail, createdAt: string, expiresAt: string): Promise<boolean> {
  const result = await db
    .insertInto('link_tokens')
    .columns(['digest', 'user_id', 'purpose', 'mail_id', 'email', 'created_at', 'expires_at'])
    .expression((eb) =>
      eb
        .selectFrom('mail_outbox as m')
        .innerJoin('users as u', 'u.id', 'm.user_id')
        .select([
          eb.val(digest).as('digest'),
          'm.user_id as user_id',
          eb.val(mail.purpose).as('purpose'),
          'm.id as mail_id',
          'm.recipient as email',
          eb.val(createdAt).as('created_at'),
          eb.val(expiresAt).as('expires_at'),
        ])
        .where('m.id', '=', mail.id)
        .where('m.user_id', '=', mail.userId)
        .where('m.link_purpose', '=', mail.purpose)
        .where('m.status', '=', 'pending')
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('mail_outbox as newer')
                .select(sql<number>`1`.as('one'))
                .whereRef('newer.user_id', '=', 'm.user_id')
                .whereRef('newer.link_purpose', '=', 'm.link_purpose')
                .whereRef('newer.seq', '>', 'm.seq'),
            ),
          ),
        ),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/**
 * Consumes a link token in the caller's transaction: the row is deleted by its digest (one
 * statement, so of any number of parallel confirmations exactly one gets it), and with it every
 * other link of the same user and purpose. Null when the digest is unknown, of another purpose,
 * expired, or its mail is no longer the newest of its user and purpose ("the old link dies").
 */
export async function consumeLinkToken(trx: Executor, digest: string, purpose: LinkPurpose, now: string): Promise<ConsumedLink | null> {
  const row = await trx
    .deleteFrom('link_tokens')
    .where('digest', '=', digest)
    .where('purpose', '=', purpose)
    .where('expires_at', '>', now)
    .returning(['user_id', 'mail_id', 'email'])
    .executeTakeFirst();
  if (!row) return null;
  await deleteLinks(trx, row.user_id, purpose);
  // Asking for a new link deletes the old ones; this also holds when that request and the minting
  // of the old mail's link were concurrent.
  const newer = await trx
    .selectFrom('mail_outbox as newer')
    .select('newer.id')
    .where('newer.user_id', '=', row.user_id)
    .where('newer.link_purpose', '=', purpose)
    .where('newer.seq', '>', (eb) => eb.selectFrom('mail_outbox').select('seq').where('id', '=', row.mail_id))
    .executeTakeFirst();
  if (newer) return null;
  return { userId: row.user_id, mailId: row.mail_id, email: row.email };
}

/**
 * Whether a link token could be consumed now: a read, for a caller that must do costly work (hash a
 * password) before consuming it, so a made-up token costs one lookup. The consumption decides.
 */
export async function isLiveLink(db: Executor, digest: string, purpose: LinkPurpose, now: string): Promise<boolean> {
  const row = await db.selectFrom('link_tokens').select('digest').where('digest', '=', digest).where('purpose', '=', purpose).where('expires_at', '>', now).executeTakeFirst();
  return row !== undefined;
}

/** Kills every link of a user and purpose: a new one was asked for, or one was used. */
export async function deleteLinks(db: Executor, userId: string, purpose: LinkPurpose): Promise<void> {
  await db.deleteFrom('link_tokens').where('user_id', '=', userId).where('purpose', '=', purpose).execute();
}

/** Removes expired link digests; they can never be used again. Returns how many. */
export async function deleteExpiredLinks(db: Executor, before: string): Promise<number> {
  const result = await db.deleteFrom('link_tokens').where('expires_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
