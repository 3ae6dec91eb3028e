/*
 * The user code of a device request (contract §13.5): eight letters of RFC 8628 §6.1's base-20
 * alphabet (no vowels, so no words), shown as XXXX-XXXX. The page normalises what the person typed
 * the way the server does, and refuses anything else before a request is spent on it: failed
 * lookups count against a limit (§13.6).
 */

const ALPHABET = /^[BCDFGHJKLMNPQRSTVWXZ]{8}$/;

/** "wdjb mjht", "WDJB-MJHT", "wdjbmjht" → "WDJB-MJHT"; null for anything that cannot be a code. */
export function normaliseUserCode(input: string): string | null {
  // Bounded first: the field has no maxlength, and nothing longer can be a code.
  if (input.length > 64) return null;
  const letters = input.toUpperCase().replace(/[\s-]/g, '');
  return ALPHABET.test(letters) ? `${letters.slice(0, 4)}-${letters.slice(4)}` : null;
}

/**
 * The code this tab is working on, kept in sessionStorage so that a visitor who must log in first
 * comes back to it: not in the URL (history, logs, a Referer), not in localStorage (other tabs).
 */
const KEY = 'rz-auth.device-code';

function storage(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    return null; // Storage disabled: the code is then typed again after the login.
  }
}

export const keptCode = (): string | null => storage()?.getItem(KEY) ?? null;
export const keepCode = (code: string): void => storage()?.setItem(KEY, code);
export const forgetCode = (): void => storage()?.removeItem(KEY);

/**
 * Takes `?user_code=` (the verification_uri_complete a CLI prints) out of the address bar and keeps
 * it: it pre-fills the field and nothing more, since approving is always the person's own click.
 */
export function takeCodeFromQuery(): void {
  const url = new URL(location.href);
  const given = url.searchParams.get('user_code');
  if (given === null) return;
  // One that is not a code is shown as it came, so the person sees what the link held.
  keepCode(normaliseUserCode(given) ?? given.slice(0, 64));
  url.searchParams.delete('user_code');
  history.replaceState(history.state, '', `${url.pathname}${url.search}${url.hash}`);
}
