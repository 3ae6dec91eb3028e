import { join } from 'node:path';
import type { Deps } from './deps.js';
import { CliError, usageError } from './errors.js';
import { assertPrivate, configDir, readIfPresent, writePrivateFile } from './files.js';
import { normalizeHost } from './host.js';
import { KEYCHAIN_ACCOUNT, keychainService, type Keychain } from './keychain.js';

/** Non-secret facts about a login, kept in hosts.json (contract §13.8). */
export interface HostRecord {
  username: string;
  token_id: string;
  hint: string;
  scopes: string[];
  expires_at: string | null;
  storage: 'keychain' | 'file';
}

export interface HostsFile {
  default_host?: string;
  hosts: Record<string, HostRecord>;
}

export type TokenSource = { kind: 'env' } | { kind: 'keychain' } | { kind: 'file'; path: string };

export const HOSTS_FILE = 'hosts.json';
export const CREDENTIALS_FILE = 'credentials.json';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function parseJson(path: string, text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (isObject(value)) return value;
  } catch {
    // Reported below with the path.
  }
  throw new CliError(`${path} is not a JSON object; remove it and log in again`);
}

export async function readHosts(deps: Deps): Promise<HostsFile> {
  const path = join(configDir(deps), HOSTS_FILE);
  const text = await readIfPresent(path);
  if (text === null) return { hosts: {} };
  const data = parseJson(path, text);
  const hosts = isObject(data.hosts) ? (data.hosts as Record<string, HostRecord>) : {};
  return typeof data.default_host === 'string' ? { default_host: data.default_host, hosts } : { hosts };
}

export const writeHosts = (deps: Deps, file: HostsFile): Promise<void> =>
  writePrivateFile(configDir(deps), HOSTS_FILE, JSON.stringify(file, null, 2) + '\n');

/** --host, then RZ_HOST, then the host of the last login. */
export function resolveHost(flag: string | undefined, deps: Deps, hosts: HostsFile): string {
  const chosen = flag ?? deps.env.RZ_HOST ?? hosts.default_host;
  if (chosen === undefined || chosen === '') throw usageError('No host: pass --host https://auth.example.com or set RZ_HOST');
  return normalizeHost(chosen);
}

async function readCredentials(deps: Deps): Promise<{ path: string; tokens: Record<string, string> } | null> {
  const path = join(configDir(deps), CREDENTIALS_FILE);
  const text = await readIfPresent(path);
  if (text === null) return null;
  await assertPrivate(path, deps.platform);
  const data = parseJson(path, text);
  const tokens: Record<string, string> = {};
  if (isObject(data.tokens)) {
    for (const [host, token] of Object.entries(data.tokens)) if (typeof token === 'string') tokens[host] = token;
  }
  return { path, tokens };
}

const writeCredentials = (deps: Deps, tokens: Record<string, string>): Promise<void> =>
  writePrivateFile(configDir(deps), CREDENTIALS_FILE, JSON.stringify({ tokens }, null, 2) + '\n');

/**
 * The token for a host, by the precedence of contract §13.8: RZ_TOKEN, the keychain, the
 * credentials file. A keychain that cannot be reached is passed over, as when it is absent.
 */
export async function loadToken(deps: Deps, host: string, keychain: Keychain | null): Promise<{ token: string; source: TokenSource } | null> {
  const fromEnv = deps.env.RZ_TOKEN;
  if (fromEnv !== undefined && fromEnv !== '') return { token: fromEnv.trim(), source: { kind: 'env' } };
  if (keychain !== null) {
    const stored = await keychain.get(keychainService(host), KEYCHAIN_ACCOUNT).catch(() => null);
    if (stored !== null && stored !== '') return { token: stored, source: { kind: 'keychain' } };
  }
  const file = await readCredentials(deps);
  const token = file?.tokens[host];
  return file !== null && token !== undefined ? { token, source: { kind: 'file', path: file.path } } : null;
}

/** Stores a token where the caller decided, and only then the metadata that points at it. */
export async function saveLogin(deps: Deps, host: string, token: string, record: HostRecord, keychain: Keychain | null): Promise<void> {
  if (record.storage === 'keychain') {
    if (keychain === null) throw new CliError('No keychain to store the token in');
    await keychain.set(keychainService(host), KEYCHAIN_ACCOUNT, token);
    await dropFileToken(deps, host);
  } else {
    const file = await readCredentials(deps);
    await writeCredentials(deps, { ...file?.tokens, [host]: token });
  }
  const hosts = await readHosts(deps);
  await writeHosts(deps, { default_host: host, hosts: { ...hosts.hosts, [host]: record } });
}

async function dropFileToken(deps: Deps, host: string): Promise<boolean> {
  const file = await readCredentials(deps);
  if (file?.tokens[host] === undefined) return false;
  const rest = Object.fromEntries(Object.entries(file.tokens).filter(([name]) => name !== host));
  await writeCredentials(deps, rest);
  return true;
}

/** Deletes the host's token from the keychain and the file, and its metadata. */
export async function forgetLogin(deps: Deps, host: string, keychain: Keychain | null): Promise<void> {
  const hosts = await readHosts(deps);
  try {
    if (keychain !== null) await keychain.delete(keychainService(host), KEYCHAIN_ACCOUNT);
  } catch (err) {
    // A keychain that cannot be reached only matters when the token was put there.
    if (hosts.hosts[host]?.storage === 'keychain') throw new CliError(`Could not delete the token from the keychain: ${(err as Error).message}`);
  }
  await dropFileToken(deps, host);
  if (hosts.hosts[host] === undefined && hosts.default_host !== host) return;
  const rest = Object.fromEntries(Object.entries(hosts.hosts).filter(([name]) => name !== host));
  const remaining = Object.keys(rest)[0];
  await writeHosts(deps, remaining === undefined ? { hosts: rest } : { default_host: hosts.default_host === host ? remaining : hosts.default_host ?? remaining, hosts: rest });
}
