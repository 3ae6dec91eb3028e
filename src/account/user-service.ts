import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Tables } from '../db/tables.js';
import { auditEvent, OPERATOR_CONTEXT, type RequestContext } from '../audit/events.js';
import type { ChangeFeed } from '../changes/feed.js';
import { type Clock, iso } from '../clock.js';
import { conflict, type FieldError, validationFailed } from '../errors.js';
import { isUniqueViolation } from '../db/dialect.js';
import type { PasswordHasher } from './password-hasher.js';
import { checkPassword, normalizePassword } from './password-policy.js';
import type { User, UserStore } from './user-store.js';
import type { TokenCounts } from '../observability/metrics/tokens.js';
import type { ActiveTokens } from '../tokens/active-count-store.js';

export interface NewUserInput {
  readonly email: string;
  readonly username: string;
  readonly password: string;
}

/** 3 to 39 of A-Z a-z 0-9 - _; the API document states the same pattern. */
export const USERNAME = /^[A-Za-z0-9_-]{3,39}$/;
/**
 * Plausible, not RFC 5322-complete: one @, a dot in the domain, no spaces, no controls, and no
 * invisible format characters (zero-width, soft hyphen, bidi overrides), so an address that prints
 * like another cannot make a second account beside it.
 */
const EMAIL = /^[^\s@\p{Cc}\p{Cf}]{1,64}@[^\s@\p{Cc}\p{Cf}.]+(\.[^\s@\p{Cc}\p{Cf}.]+)+$/u;

/**
 * Emails compare trimmed, lower-cased and in Unicode NFC everywhere (signup, login, CLI): `é`
 * precomposed and `e` with a combining accent are one address (RFC 6532), so one account, which
 * logs in however the keyboard spelled it. Stored emails were brought to NFC by migration 0009.
 */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase().normalize('NFC');

/**
 * True when a normalized email may belong to an account: what login and a reset request look up.
 * Looser than {@link isPlainMailbox}: addresses stored before that rule still log in.
 */
export const isAccountEmail = (email: string): boolean => email.length <= 254 && EMAIL.test(email);

/**
 * One character of a plain mailbox's local part or domain label (RFC 5322 atext, with the UTF-8
 * of RFC 6531): none of the specials `( ) < > [ ] : ; \ , . "`, no space, control or invisible
 * format character. A mail library given `a,b@x` or `a<b@x>` sends to someone else.
 */
const ATEXT = String.raw`[^\s@\p{Cc}\p{Cf}()<>\[\]:;\\,."]`;
/** `local@domain`, dot-separated runs of ATEXT on both sides, nothing else: one plain mailbox. */
const MAILBOX = new RegExp(String.raw`^(${ATEXT}+(?:\.${ATEXT}+)*)@${ATEXT}+(?:\.${ATEXT}+)+$`, 'u');

/** True when a normalized email is one plain mailbox no mailer can misread: what signup, the CLI and an email change accept. */
export function isPlainMailbox(email: string): boolean {
  if (email.length > 254) return false;
  const local = MAILBOX.exec(email)?.[1];
  return local !== undefined && local.length <= 64;
}

/** Rules for accounts, shared by signup and the CLI. */
export class UserService {
  constructor(
    private readonly store: UserStore,
    private readonly hasher: PasswordHasher,
    private readonly feed: ChangeFeed,
    private readonly clock: Clock,
    private readonly policy: { minLength: number; blocklist: { has(value: string): boolean } },
    private readonly counts: TokenCounts | null = null,
  ) {}

  /**
   * Validates, hashes and stores a new account: a signup, or the operator's `users create`.
   * @throws validation_failed or conflict
   */
  async create(input: NewUserInput, context: RequestContext, also?: (trx: Transaction<Tables>, user: User) => Promise<void>): Promise<User> {
    const email = normalizeEmail(input.email);
    const username = input.username;
    const password = normalizePassword(input.password);
    const errors: FieldError[] = [];
    if (!isPlainMailbox(email)) errors.push({ field: 'email', message: 'must be one plain email address (name@example.com)' });
    if (!USERNAME.test(username)) {
      errors.push({ field: 'username', message: 'must be 3 to 39 characters of letters, digits, - and _' });
    }
    const passwordError = this.checkPassword(password, { email, username });
    if (passwordError) errors.push(passwordError);
    if (errors.length > 0) throw validationFailed(errors);

    await this.assertAvailable(email, username);
    const now = this.clock.now();
    const user = { id: randomUUID(), email, username, createdAt: iso(now) };
    const passwordHash = await this.hasher.hash(password);
    const byOperator = context.actor.type === 'operator';
    const event = auditEvent(
      // A signup is the new user's own act; no email or password in the event.
      { type: byOperator ? 'user.created' : 'user.signed_up', userId: user.id, subject: { type: 'user', id: user.id }, ...(byOperator ? {} : { actor: { type: 'user', id: user.id } }) },
      context,
      now,
    );
    try {
      await this.store.insert({ ...user, passwordHash }, event, also && ((trx) => also(trx, user)));
    } catch (error) {
      // A concurrent signup took the email or username between the check and the insert.
      if (isUniqueViolation(error)) await this.assertAvailable(email, username);
      throw error;
    }
    return user;
  }

  /** What is wrong with a normalized password for the account of `email` and `username`, or null. */
  checkPassword(password: string, account: { readonly email: string; readonly username: string }): FieldError | null {
    return checkPassword(password, { ...this.policy, email: account.email, username: account.username });
  }

  list(): Promise<User[]> {
    return this.store.list();
  }

  /** Deletes an account with everything it owns; its tokens stop working on the next request. */
  async delete(id: string, context: RequestContext = OPERATOR_CONTEXT): Promise<boolean> {
    const now = this.clock.now();
    const counts = this.counts;
    const revoked = counts
      ? (tokens: ActiveTokens) => {
          counts.revoked('api_token', 'user_deleted', tokens.api);
          counts.revoked('app_token', 'user_deleted', tokens.app);
        }
      : undefined;
    const deleted = await this.store.delete(id, iso(now), auditEvent({ type: 'user.deleted', userId: id, subject: { type: 'user', id } }, context, now), revoked);
    if (deleted) await this.feed.committed('user', id);
    return deleted;
  }

  private async assertAvailable(email: string, username: string): Promise<void> {
    const taken = await this.store.findTaken(email, username);
    if (taken.email) throw conflict('An account with this email already exists.', 'email');
    if (taken.username) throw conflict('This username is taken.', 'username');
  }
}
