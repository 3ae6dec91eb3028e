import { ApiError, type SessionGrant, type User } from './api.js';

/**
 * The signed-in user's token. Kept in memory and in sessionStorage (so a reload keeps the person
 * signed in), never in localStorage: it dies with the tab and is not shared with other tabs.
 */
export interface Session {
  readonly jwt: string;
  readonly user: User;
}

const KEY = 'rz-auth.session';
let current: Session | null = null;
let expiryTimer: number | undefined;
let onEnded: () => void = () => {};

/** Thrown in place of a 401 once the session has ended; the login screen already says why. */
export class SessionEnded extends Error {
  override name = 'SessionEnded';
}

function storage(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    return null; // Storage disabled: the session then lives in memory only.
  }
}

/** Seconds since the epoch at which the JWT expires, read (not verified: the server does that). */
function expiryOf(jwt: string): number | null {
  try {
    const payload = (jwt.split('.')[1] ?? '').replaceAll('-', '+').replaceAll('_', '/');
    const exp: unknown = (JSON.parse(atob(payload)) as { exp?: unknown }).exp;
    return typeof exp === 'number' ? exp : null;
  } catch {
    return null;
  }
}

function scheduleExpiry(jwt: string): void {
  window.clearTimeout(expiryTimer);
  const exp = expiryOf(jwt);
  if (exp === null) return;
  // Return to the login screen when the token expires rather than on the next failed click.
  const ms = Math.min(exp * 1000 - Date.now(), 2 ** 31 - 1);
  expiryTimer = window.setTimeout(() => expire(), Math.max(ms, 0));
}

/** Called when the session ends by itself (expiry, logout elsewhere, revocation). */
export function onSessionEnded(handler: () => void): void {
  onEnded = handler;
}

export function startSession(grant: SessionGrant): Session {
  current = { jwt: grant.token, user: grant.user };
  storage()?.setItem(KEY, JSON.stringify(current));
  scheduleExpiry(current.jwt);
  return current;
}

/** The session saved in this tab before a reload, if any. */
export function restoreSession(): Session | null {
  try {
    const saved = JSON.parse(storage()?.getItem(KEY) ?? 'null') as Partial<Session> | null;
    if (typeof saved?.jwt === 'string' && typeof saved.user?.id === 'string') {
      current = { jwt: saved.jwt, user: saved.user };
      scheduleExpiry(current.jwt);
    }
  } catch {
    storage()?.removeItem(KEY);
  }
  return current;
}

export const currentSession = (): Session | null => current;

/** The account as the server now describes it (a changed email, say), kept with the session. */
export function updateUser(user: Partial<Pick<User, 'email' | 'username'>>): void {
  if (current === null) return;
  current = { jwt: current.jwt, user: { ...current.user, ...user } };
  storage()?.setItem(KEY, JSON.stringify(current));
}

export function endSession(): void {
  current = null;
  window.clearTimeout(expiryTimer);
  storage()?.removeItem(KEY);
}

function expire(): void {
  if (current === null) return;
  endSession();
  onEnded();
}

/** Asks the person to authenticate again; resolves with the new token, or null when they cancel. */
export type StepUp = (jwt: string) => Promise<string | null>;
let stepUp: StepUp = () => Promise.resolve(null);
let pendingStepUp: Promise<string | null> | null = null;

/** Sets what answers `insufficient_user_authentication` (the re-authentication dialog). */
export function onStepUp(handler: StepUp): void {
  stepUp = handler;
}

/** One dialog however many calls were refused at once: they all wait for the same new token. */
function freshToken(jwt: string): Promise<string | null> {
  pendingStepUp ??= stepUp(jwt).finally(() => {
    pendingStepUp = null;
  });
  return pendingStepUp;
}

/** The same session with the token a step-up issued for it (POST /api/auth/reauth). */
function replaceToken(session: Session, jwt: string): Session {
  if (current !== session) return session;
  current = { jwt, user: session.user };
  storage()?.setItem(KEY, JSON.stringify(current));
  scheduleExpiry(jwt);
  return current;
}

const isChallenge = (error: unknown): boolean => error instanceof ApiError && error.status === 401 && error.code === 'insufficient_user_authentication';

/**
 * Runs an API call with the user's token. A 401 means the session is over (expired, logged out in
 * another tab, revoked): the page returns to the login screen and the caller gets SessionEnded.
 * A wrong password on the account screen is a 401 too (`invalid_credentials`), but the session
 * is fine: the caller gets that error to show. An action that needs a recent login
 * (`insufficient_user_authentication`, RFC 9470) asks the person to authenticate again and is
 * retried once with the new token; cancelled, the caller gets the refusal.
 */
export async function authed<T>(call: (jwt: string) => Promise<T>): Promise<T> {
  let session = current;
  if (session === null) throw new SessionEnded();
  try {
    try {
      return await call(session.jwt);
    } catch (error) {
      if (!isChallenge(error)) throw error;
      const jwt = await freshToken(session.jwt);
      if (jwt === null) throw error;
      session = replaceToken(session, jwt);
      return await call(jwt);
    }
  } catch (error) {
    if (error instanceof ApiError && error.status === 401 && error.code !== 'invalid_credentials' && !isChallenge(error)) {
      if (current === session) expire();
      throw new SessionEnded();
    }
    throw error;
  }
}
