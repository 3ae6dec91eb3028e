import { COMMON, parse, tokenFromStdin } from './args.js';
import { canOpenBrowser } from './browser.js';
import type { Deps } from './deps.js';
import { CliError, usageError } from './errors.js';
import { isSafeUrl } from './host.js';
import { createHttp, type Http } from './http.js';
import { keychainProblem, type Keychain } from './keychain.js';
import { formatExpiry, whoAmI } from './me.js';
import { readMetadata, requestDeviceCode } from './oauth.js';
import { pollForToken } from './poll.js';
import { readHosts, resolveHost, saveLogin, type HostRecord } from './storage.js';

const OPTIONS = {
  ...COMMON,
  scopes: { type: 'string' },
  'device-name': { type: 'string' },
  'no-browser': { type: 'boolean' },
  'insecure-storage': { type: 'boolean' },
  'with-token': { type: 'boolean' },
} as const;

/** `rz login`: device authorization (RFC 8628), or `--with-token` from stdin. */
export async function login(argv: readonly string[], deps: Deps): Promise<void> {
  const v = parse(argv, OPTIONS);
  if (v['with-token'] === true && (v.scopes !== undefined || v['device-name'] !== undefined || v['no-browser'] === true)) {
    throw usageError('--with-token takes only --host and --insecure-storage');
  }
  const host = resolveHost(v.host, deps, await readHosts(deps));
  const keychain = await deps.loadKeychain();
  const storage = await chooseStorage(deps, host, keychain, v['insecure-storage'] === true || deps.env.RZ_INSECURE_STORAGE === '1');
  const http = createHttp(deps, v.debug === true);
  const token = v['with-token'] === true
    ? await pipedToken(deps)
    : await deviceLogin(http, deps, host, { scopes: v.scopes, deviceName: v['device-name'], noBrowser: v['no-browser'] === true });
  const me = await whoAmI(http, host, token, deps.signal);
  const record: HostRecord = { ...me, storage };
  await saveLogin(deps, host, token, record, keychain);
  deps.stdout(`Logged in to ${host} as ${me.username} (token expires ${formatExpiry(me.expires_at)})\n`);
}

/**
 * Where the token will go, decided before anything is requested or written (contract §13.8):
 * the keychain when it answers; otherwise a file only when the user asked for one.
 */
async function chooseStorage(deps: Deps, host: string, keychain: Keychain | null, insecure: boolean): Promise<HostRecord['storage']> {
  const problem = await keychainProblem(keychain, host);
  if (problem === null) return 'keychain';
  if (!insecure) {
    throw new CliError(
      `No working keychain to store the token in (${problem}).\n` +
      'Nothing was requested or written. Either make an OS keychain available (on Linux: a Secret Service such as\n' +
      'gnome-keyring, with DBUS_SESSION_BUS_ADDRESS set), or store the token in a file readable only by you with\n' +
      '--insecure-storage (or RZ_INSECURE_STORAGE=1).',
    );
  }
  deps.stderr(`warning: no working keychain (${problem}); the token will be stored in a file readable only by you.\n`);
  return 'file';
}

async function pipedToken(deps: Deps): Promise<string> {
  const token = await tokenFromStdin(deps, 'rz login --with-token < token.txt');
  if (!/^(rz|rza|rzd)_[A-Za-z0-9_-]{1,4096}$/.test(token)) throw usageError('stdin does not hold an rz_, rza_ or rzd_ token');
  return token;
}

interface DeviceOptions { scopes: string | undefined; deviceName: string | undefined; noBrowser: boolean }

async function deviceLogin(http: Http, deps: Deps, host: string, options: DeviceOptions): Promise<string> {
  const scopes = (options.scopes ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (scopes.some((s) => !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s))) throw usageError('--scopes is a comma-separated list of scope names');
  const deviceName = cleanDeviceName(options.deviceName ?? deps.hostname);
  const metadata = await readMetadata(http, host, deps.signal);
  if (metadata.token_endpoint === undefined) throw new CliError(`${host} names no token endpoint`);
  const code = await requestDeviceCode(http, metadata, scopes, deviceName, deps.signal);
  deps.stderr(`! First copy your one-time code: ${code.user_code}\n`);
  const complete = code.verification_uri_complete;
  // Only an http(s) page on a safe origin is handed to the OS opener, which would run anything.
  const openable = complete !== undefined && isSafeUrl(complete) && canOpenBrowser(deps, options.noBrowser);
  if (openable) {
    deps.stderr(`Opening ${complete} in your browser; if it does not open, go to ${code.verification_uri}\n`);
    deps.openBrowser(complete);
  } else {
    deps.stderr(`Open ${code.verification_uri} in a browser where you are logged in, and enter the code.\n`);
  }
  deps.stderr('Waiting for approval (Ctrl-C to stop)…\n');
  const grant = await pollForToken(http, deps, metadata.token_endpoint, code, deps.signal);
  return grant.access_token;
}

/** Contract §13.5: 1–64 characters, no control characters; the hostname is the default. */
function cleanDeviceName(name: string): string {
  const clean = name.replace(/[\x00-\x1f\x7f-\x9f]/g, '').trim().slice(0, 64).trim();
  if (clean === '') throw usageError('--device-name must have a printable character');
  return clean;
}
