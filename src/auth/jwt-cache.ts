import { invalidToken } from '../errors.js';
import type { Session } from '../account/session-store.js';
import type { Principal } from './principal.js';

/**
 * Verified JWTs are filed under the last characters of their signature, and a hit must equal the
 * whole token: hashing a few hundred characters per request cost measurably more than this tail
 * and one comparison. Sixteen characters of an Ed25519 signature carry 92 bits that no two tokens
 * share by chance; a forged token that copies a cached one's signature finds that entry, fails the
 * comparison and is verified like any other.
 */
const JWT_KEY_LENGTH = 16;
export const jwtKey = (token: string): string => token.slice(-JWT_KEY_LENGTH);

/** What authentication needs of a session, with its expiry parsed once. */
export interface CachedSession {
  readonly userId: string;
  readonly revoked: boolean;
  /** Milliseconds since the epoch. */
  readonly expiresAt: number;
}

export const toCachedSession = (session: Session): CachedSession => ({
  userId: session.userId,
  revoked: session.revokedAt !== null,
  expiresAt: Date.parse(session.expiresAt),
});

export interface JwtEntry {
  /** The whole token: the cache's key is only its tail. */
  readonly token: string;
  readonly principal: Principal;
  readonly sessionId: string;
  /** Until when the verification holds: `exp`, or the signing key's end when that comes first. */
  readonly expiresAt: number;
}

/** A verified JWT is valid while its session is: same user, not revoked, not expired. */
export function acceptSession(entry: JwtEntry, session: CachedSession | null | undefined, now: number): Principal {
  if (!session || session.userId !== entry.principal.user.id || session.revoked || session.expiresAt <= now) {
    throw invalidToken();
  }
  return entry.principal;
}
