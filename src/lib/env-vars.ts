// Reading environment variables: each mistake is a ConfigError that names the variable.

/** Thrown for an invalid environment; the message names the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export type Env = Record<string, string | undefined>;

export function raw(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === '' ? undefined : value;
}

export function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value)) throw new ConfigError(`${name} must be a whole number, got "${value}"`);
  const n = Number(value);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** A whole number when the variable is set, null when it is not (the policy is off). */
export function optionalInt(env: Env, name: string, min: number, max: number): number | null {
  return raw(env, name) === undefined ? null : int(env, name, min, min, max);
}

export function bool(env: Env, name: string, fallback: boolean): boolean {
  const value = raw(env, name)?.toLowerCase();
  if (value === undefined) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(value)) return true;
  if (['0', 'false', 'no', 'off'].includes(value)) return false;
  throw new ConfigError(`${name} must be true or false, got "${value}"`);
}

export function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  const found = allowed.find((a) => a.toLowerCase() === value.toLowerCase());
  if (!found) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${value}"`);
  return found;
}

