import { ConfigError, type Env, raw } from './env-vars.js';

/**
 * CORS_ORIGINS: the exact origins (scheme, host and port, as a browser sends `Origin`) of the
 * platform's own front-ends, comma-separated; none by default. No wildcard and no `null`: a page
 * of any site, or a sandboxed one, must not read answers with a user's token.
 */
export function parseCorsOrigins(env: Env): readonly string[] {
  return parseOriginList(env, 'CORS_ORIGINS') ?? [];
}

/** A comma-separated list of exact origins in the variable `name`; undefined when it is unset. */
export function parseOriginList(env: Env, name: string): readonly string[] | undefined {
  const value = raw(env, name);
  if (value === undefined) return undefined;
  return value.split(',').map((entry) => {
    const origin = entry.trim();
    const parsed = URL.canParse(origin) ? new URL(origin) : null;
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin) {
      throw new ConfigError(`${name} must list exact origins such as https://app.example.com (no path, no trailing slash, no wildcard), got "${origin.slice(0, 100)}"`);
    }
    return origin;
  });
}
