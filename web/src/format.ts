import { ApiError } from './api.js';

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

const UNITS: ReadonlyArray<readonly [Intl.RelativeTimeFormatUnit, number]> = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
];

/** "3 minutes ago", "in 30 days", "now". */
export function fromNow(iso: string, now = Date.now()): string {
  const seconds = (Date.parse(iso) - now) / 1000;
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return relative.format(Math.round(seconds / size), unit);
  }
  return seconds < 0 ? 'just now' : 'in less than a minute';
}

export const formatDateTime = (iso: string): string => dateTime.format(new Date(iso));
export const formatDate = (iso: string): string => dateOnly.format(new Date(iso));

/** "42 seconds", "10 minutes": a wait a person can plan around. */
export function formatWait(seconds: number): string {
  if (seconds <= 90) return seconds === 1 ? '1 second' : `${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  if (minutes <= 90) return `${minutes} minutes`;
  const hours = Math.ceil(minutes / 60);
  return hours === 1 ? '1 hour' : `${hours} hours`;
}

/** "must be at least 15 characters long" → "Must be at least 15 characters long." */
export function sentence(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return trimmed;
  const capital = (trimmed[0] ?? '').toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

/** What to tell a person about a failed call, in plain words (never the raw problem document). */
export function describeError(error: unknown, notFound = 'That item no longer exists. It may have been deleted already.'): string {
  if (!(error instanceof ApiError)) return 'Something went wrong in this page. Reload it and try again.';
  const reference = error.requestId ? ` If it keeps happening, quote reference ${error.requestId}.` : '';
  switch (error.status) {
    case 0:
      return 'Could not reach rz-auth. Check your connection and try again.';
    case 400:
      return error.fieldErrors.length > 0
        ? `Please correct: ${error.fieldErrors.map((e) => `${e.field} ${e.message}`).join('; ')}.`
        : sentence(error.detail || 'The request was not accepted');
    case 401:
      if (error.code === 'insufficient_user_authentication') return 'This needs you to confirm it is you. Try again, and confirm when asked.';
      return error.code === 'invalid_credentials' ? 'The email or password is incorrect.' : 'Your session ended, please log in again.';
    case 403:
      if (error.code === 'email_unverified') return 'Verify your email address first: open the link we mailed you, or choose “Send again” at the top of the page.';
      return error.code === 'forbidden'
        ? 'This server does not allow that (for example, self-service signup may be closed). Ask the administrator.'
        : 'You are not allowed to do this.';
    case 404:
      return notFound;
    case 409:
      return sentence(error.detail || 'That already exists');
    case 429:
      return error.retryAfter !== null
        ? `Too many requests. Please wait ${formatWait(error.retryAfter)} and try again.`
        : 'Too many requests. Please wait a little and try again.';
    case 503:
      return `rz-auth is busy or cannot reach its database right now. Please try again${error.retryAfter !== null ? ` in ${formatWait(error.retryAfter)}` : ' shortly'}.`;
    default:
      return error.status >= 500
        ? `The server could not complete the request. Please try again in a moment.${reference}`
        : sentence(error.detail || `The request failed (HTTP ${error.status})`);
  }
}
