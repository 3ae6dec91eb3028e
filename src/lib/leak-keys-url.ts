import { ConfigError } from './env-vars.js';

/** Where GitHub publishes the keys that sign its secret scanning reports. */
const GITHUB_KEYS_URL = 'https://api.github.com/meta/public_keys/secret_scanning';

/** LEAK_GITHUB_KEYS_URL: https, or http to a loopback host only (a local key server in tests). */
export function parseKeysUrl(value: string | undefined): string {
  if (value === undefined || value === '') return GITHUB_KEYS_URL;
  const url = URL.canParse(value) ? new URL(value) : null;
  const loopback = url !== null && ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
  if (url?.protocol === 'https:' || (url?.protocol === 'http:' && loopback)) return url.href;
  throw new ConfigError('LEAK_GITHUB_KEYS_URL must be an https URL (http only to 127.0.0.1, [::1] or localhost)');
}
