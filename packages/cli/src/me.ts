import { CliError, deniedError } from './errors.js';
import type { Http } from './http.js';
import type { HostRecord } from './storage.js';

/** The token's display hint, as rz-auth's lists show it: the prefix and the last 4 characters. */
export function hintOf(token: string): string {
  const prefix = token.slice(0, token.indexOf('_') + 1);
  return `${prefix}…${token.slice(-4)}`;
}

/**
 * GET /api/me with the token: proves it works and names the user it belongs to, so a person
 * whose code was approved by someone else sees the wrong name at once (contract §13.8).
 */
export async function whoAmI(http: Http, host: string, token: string, signal?: AbortSignal): Promise<Omit<HostRecord, 'storage'>> {
  const reply = await http.send({ method: 'GET', url: `${host}/api/me`, token }, signal);
  if (reply.status === 401 || reply.status === 403) throw deniedError(`${host} refused the token (HTTP ${reply.status})`);
  if (reply.status !== 200) throw new CliError(`${host} answered GET /api/me with HTTP ${reply.status}`);
  const { username, auth } = reply.body;
  if (typeof username !== 'string' || typeof auth !== 'object' || auth === null) throw new CliError(`${host} answered GET /api/me with an unexpected body`);
  const a = auth as Record<string, unknown>;
  return {
    username,
    token_id: typeof a.token_id === 'string' ? a.token_id : '',
    hint: hintOf(token),
    scopes: Array.isArray(a.scopes) ? a.scopes.filter((s): s is string => typeof s === 'string') : [],
    expires_at: typeof a.expires_at === 'string' ? a.expires_at : null,
  };
}

/** "2027-03-07 14:05 UTC", or "never". */
export function formatExpiry(expiresAt: string | null): string {
  if (expiresAt === null) return 'never';
  const date = new Date(expiresAt);
  return Number.isNaN(date.getTime()) ? expiresAt : `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
