import { createHash, randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { type Clock, iso } from '../clock.js';
import type { Tables } from '../db/tables.js';
import type { LinkMinter, LinkPurpose } from '../mail/outbox.js';
import { insertLinkToken } from './link-store.js';

/** The prefix of link tokens: the log redaction knows the shape (lib/redact.ts). */
export const LINK_PREFIX = 'rzl_';
/** 32 bytes (256 bits) in base64url, without padding. */
const LINK_BODY = /^[A-Za-z0-9_-]{43}$/;

/** How long the link of each purpose lives, counted from its mail's creation (RESET_TOKEN_TTL_S, VERIFY_TOKEN_TTL_S). */
export type LinkLifetimes = Readonly<Record<LinkPurpose, number>>;

/** A new link token: 256 bits from the CSPRNG (§11.3). */
export const newLinkToken = (): string => LINK_PREFIX + randomBytes(32).toString('base64url');

/**
 * The digest stored for a link token: SHA-256 (the token carries 256 random bits, so no key or
 * slow hash is needed); null for a string that cannot be one of ours, which is never looked up.
 */
export function linkDigest(token: string): string | null {
  if (!token.startsWith(LINK_PREFIX) || !LINK_BODY.test(token.slice(LINK_PREFIX.length))) return null;
  return digestOf(token);
}

const digestOf = (token: string): string => createHash('sha256').update(token).digest('hex');

/**
 * Mints the token of a mail's link as the worker sends it, so no plaintext token is ever stored.
 * Null when the mail no longer deserves one: superseded by a newer mail of its purpose, or its
 * user is gone.
 */
export class LinkTokens implements LinkMinter {
  constructor(
    private readonly lifetimesMs: LinkLifetimes,
    private readonly clock: Clock,
  ) {}

  async mint(
    db: Kysely<Tables> | Transaction<Tables>,
    mail: { readonly id: string; readonly userId: string; readonly purpose: LinkPurpose; readonly recipient: string; readonly createdAt: string },
  ): Promise<string | null> {
    const token = newLinkToken();
    const expiresAt = iso(Date.parse(mail.createdAt) + this.lifetimesMs[mail.purpose]);
    return (await insertLinkToken(db, digestOf(token), mail, iso(this.clock.now()), expiresAt)) ? token : null;
  }
}
