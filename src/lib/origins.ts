import { ConfigError, type Env, raw } from './env-vars.js';

/**
 * CORS_ORIGINS: the exact origins (scheme, host and port, as a browser sends `Origin`) of the
 * platform's own front-ends, comma-separated; none by default. No wildcard and no `null`: a page
 * of any site, or a sandboxed one, must not read answers with a user's token.
 */
export function parseCorsOrigins(env: Env): readonly string[] {
  const value = raw(env, 'CORS_ORIGINS');
  if (value === undefined) return [];
  return value.split(',').map((entry) => {
    const origin = entry.trim();
    const parsed = URL.canParse(origin) ? new URL(origin) : null;
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin) {
      throw new ConfigError(`CORS_ORIGINS must list exact origins such as https://app.example.com (no path, no trailing slash, no wildcard), got "${origin.slice(0, 100)}"`);
    }
    return origin;
  });
}
