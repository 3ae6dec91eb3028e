import { COMMON, parse } from './args.js';
import type { Deps } from './deps.js';
import { CliError, EXIT } from './errors.js';
import { createHttp } from './http.js';
import { CLIENT_ID, readMetadata } from './oauth.js';
import { forgetLogin, loadToken, readHosts, resolveHost } from './storage.js';

/**
 * `rz logout`: revoke the stored token on the server (RFC 7009), then delete it here. A server
 * that cannot be reached does not keep the token on disk; the user is told it stays live.
 */
export async function logout(argv: readonly string[], deps: Deps): Promise<void> {
  const v = parse(argv, COMMON);
  const host = resolveHost(v.host, deps, await readHosts(deps));
  const keychain = await deps.loadKeychain();
  // The stored token is the one to end: RZ_TOKEN belongs to whoever set it.
  const stored = await loadToken({ ...deps, env: { ...deps.env, RZ_TOKEN: undefined } }, host, keychain);
  if (stored === null) {
    await forgetLogin(deps, host, keychain);
    deps.stderr(`Not logged in to ${host}.\n`);
    return;
  }
  const http = createHttp(deps, v.debug === true);
  let failure: CliError | null = null;
  try {
    const metadata = await readMetadata(http, host, deps.signal);
    const endpoint = metadata.revocation_endpoint ?? `${host}/oauth/revoke`;
    const reply = await http.send({ method: 'POST', url: endpoint, form: { token: stored.token, client_id: CLIENT_ID } }, deps.signal);
    if (reply.status !== 200) failure = new CliError(`${host} did not revoke the token (HTTP ${reply.status})`);
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    failure = err;
  }
  await forgetLogin(deps, host, keychain);
  if (deps.env.RZ_TOKEN !== undefined && deps.env.RZ_TOKEN !== '') deps.stderr('note: RZ_TOKEN is still set in this environment.\n');
  if (failure === null) {
    deps.stdout(`Logged out of ${host}; the token was revoked and deleted from this machine.\n`);
    return;
  }
  const live = failure.exitCode === EXIT.network ? failure.exitCode : EXIT.error;
  throw new CliError(`${failure.message}\nThe token was deleted from this machine but stays live until it expires; revoke it on the Developers page.`, live);
}
