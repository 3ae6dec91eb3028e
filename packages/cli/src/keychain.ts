import type * as KeyringModule from '@napi-rs/keyring';

/**
 * The OS keychain as three verbs, so the storage code and its tests do not depend on the binding.
 * Every method rejects when the platform store cannot be reached.
 */
export interface Keychain {
  get(service: string, account: string): Promise<string | null>;
  set(service: string, account: string, secret: string): Promise<void>;
  delete(service: string, account: string): Promise<boolean>;
}

/** Contract §13.8: one keychain item per host, account `default`. */
export const keychainService = (host: string): string => `rz:${host}`;
export const KEYCHAIN_ACCOUNT = 'default';

/**
 * @napi-rs/keyring, loaded lazily: it is an optional dependency, so a missing or broken install
 * means no keychain (null), never a crash. On Linux the binding's default store is the Secret
 * Service with a fallback to the kernel keyutils store; both answering "Couldn't access platform
 * storage" (no session bus, keyctl denied in a container) surfaces on first use, not here.
 */
export async function loadNapiKeychain(): Promise<Keychain | null> {
  let binding: typeof KeyringModule;
  try {
    binding = await import('@napi-rs/keyring');
  } catch {
    return null;
  }
  const entry = (service: string, account: string) => new binding.AsyncEntry(service, account);
  return {
    get: (service, account) => entry(service, account).getPassword(),
    set: (service, account, secret) => entry(service, account).setPassword(secret),
    delete: (service, account) => entry(service, account).deleteCredential(),
  };
}

/**
 * Why the keychain cannot hold this host's token (null when it can). A read is not enough: with no
 * Secret Service, Linux reads of a missing item succeed while every write is refused. So a probe
 * item (account `probe`, beside the real one) is written and deleted before a login starts, and a
 * login that could not store its token never begins.
 */
export async function keychainProblem(keychain: Keychain | null, host: string): Promise<string | null> {
  if (keychain === null) return 'the keychain binding @napi-rs/keyring is not installed';
  try {
    await keychain.set(keychainService(host), PROBE_ACCOUNT, 'probe');
    await keychain.delete(keychainService(host), PROBE_ACCOUNT);
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

const PROBE_ACCOUNT = 'probe';
