import type { Deps } from './deps.js';
import { CliError, deniedError, EXIT } from './errors.js';
import type { Http } from './http.js';
import { CLIENT_ID, DEVICE_GRANT, oauthError, type DeviceCode } from './oauth.js';

export interface Grant {
  access_token: string;
  scope: string[];
  token_id: string | null;
}

/** RFC 8628 §3.5: each slow_down adds 5 seconds to the interval, for all later polls. */
const SLOW_DOWN_MS = 5_000;
/** Longest wait after repeated connection errors; the code's expiry still ends the loop. */
const MAX_BACKOFF_MS = 300_000;

/**
 * Polls the token endpoint until the request is approved, denied or expired (RFC 8628 §3.4–3.5).
 * The deadline is the device code's own expires_in, kept by this clock: a server that keeps
 * answering authorization_pending past it does not keep the CLI waiting.
 */
export async function pollForToken(http: Http, deps: Pick<Deps, 'now' | 'sleep'>, tokenEndpoint: string, code: DeviceCode, signal: AbortSignal): Promise<Grant> {
  const deadline = deps.now() + code.expires_in * 1000;
  let interval = code.interval * 1000;
  let wait = interval;
  const form = { grant_type: DEVICE_GRANT, device_code: code.device_code, client_id: CLIENT_ID };
  for (;;) {
    const left = deadline - deps.now();
    if (left > 0) await deps.sleep(Math.min(wait, left), signal);
    if (deps.now() >= deadline) throw deniedError('The code expired before it was approved; run rz login again');
    let reply;
    try {
      reply = await http.send({ method: 'POST', url: tokenEndpoint, form }, signal);
    } catch (err) {
      if (!(err instanceof CliError) || err.exitCode !== EXIT.network) throw err;
      // RFC 8628 §3.5: back off exponentially while the server cannot be reached.
      wait = Math.min(wait * 2, MAX_BACKOFF_MS);
      continue;
    }
    const error = reply.body.error;
    if (reply.status === 200) return grantOf(reply.body);
    if (error === 'authorization_pending') {
      wait = interval;
    } else if (error === 'slow_down' || reply.status === 429) {
      interval += SLOW_DOWN_MS;
      wait = interval;
    } else if (error === 'access_denied') {
      throw deniedError('The request was denied on the device page');
    } else if (error === 'expired_token') {
      throw deniedError('The code expired before it was approved; run rz login again');
    } else {
      throw oauthError(reply, 'The server refused the login');
    }
  }
}

function grantOf(body: Record<string, unknown>): Grant {
  const token = body.access_token;
  if (typeof token !== 'string' || !/^rz_[A-Za-z0-9]{1,200}$/.test(token)) throw new CliError('The server answered with something that is not an rz_ API token');
  return {
    access_token: token,
    scope: typeof body.scope === 'string' ? body.scope.split(' ').filter((s) => s !== '') : [],
    token_id: typeof body.token_id === 'string' ? body.token_id : null,
  };
}
