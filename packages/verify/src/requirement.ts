import { type Caller, checkScopeNames } from './caller.js';
import { type AuthRequirement, checkAuthRequirement } from './step-up.js';
import type { VerifierCore } from './verifier.js';

/**
 * A protected route's demands, for the Fastify option and the middleware: the scopes each needed
 * (`requireScopes`), and, when `mfa` or `maxAge` is given, a user login as `requireAuth` checks it.
 */
export interface RouteRequirement extends AuthRequirement {
  readonly scopes?: readonly string[];
}

/** A route's demands once checked: `auth` null when any token will do. */
export interface Requirement {
  readonly scopes: readonly string[];
  readonly auth: AuthRequirement | null;
}

/** Checks a route's demands once, when it is declared; throws a TypeError naming what is wrong. */
export function requirementOf(value: unknown, what: string): Requirement {
  checkAuthRequirement(value, what);
  const { scopes = [], mfa, maxAge } = value as RouteRequirement;
  if (!Array.isArray(scopes)) throw new TypeError(`${what}: scopes must be a list of scope names`);
  checkScopeNames(scopes);
  const auth = mfa === undefined && maxAge === undefined ? null : { ...(mfa === undefined ? {} : { mfa }), ...(maxAge === undefined ? {} : { maxAge }) };
  return Object.freeze({ scopes: Object.freeze([...scopes]), auth });
}

/** @throws the {@link VerifyError} of the first demand `caller` fails. */
export function enforce(core: VerifierCore, caller: Caller, requirement: Requirement): void {
  core.requireScopes(caller, ...requirement.scopes);
  if (requirement.auth !== null) core.requireAuth(caller, requirement.auth);
}
