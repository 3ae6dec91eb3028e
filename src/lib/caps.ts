import { conflict, type ProblemError } from '../errors.js';
import { type Env, int } from './env-vars.js';

/**
 * What one user may own, from the configuration (docs/deployment.md): active API tokens, apps,
 * active tokens per app, webhook endpoints. Revoked, expired, deleted and rotated-out tokens do not
 * count. Each bounds what one account can make the service store and list.
 */
export interface OwnershipCaps {
  readonly apiTokensPerUser: number;
  readonly appsPerUser: number;
  readonly tokensPerApp: number;
  readonly webhooksPerUser: number;
}

export const DEFAULT_CAPS: OwnershipCaps = { apiTokensPerUser: 500, appsPerUser: 100, tokensPerApp: 20, webhooksPerUser: 10 };

/** The variable that sets each cap. */
export const CAP_VARIABLES: Readonly<Record<keyof OwnershipCaps, string>> = {
  apiTokensPerUser: 'MAX_API_TOKENS_PER_USER',
  appsPerUser: 'MAX_APPS_PER_USER',
  tokensPerApp: 'MAX_TOKENS_PER_APP',
  webhooksPerUser: 'MAX_WEBHOOKS_PER_USER',
};

const WHAT: Readonly<Record<keyof OwnershipCaps, [owned: string, remedy: string]>> = {
  apiTokensPerUser: ['active API tokens', 'revoke one first'],
  appsPerUser: ['apps', 'delete one first'],
  tokensPerApp: ['active tokens for this app', 'revoke one or rotate it instead'],
  webhooksPerUser: ['webhook endpoints', 'delete one first'],
};

/** 409 conflict naming the cap that a creation would pass, and its variable. */
export function capReached(cap: keyof OwnershipCaps, limit: number): ProblemError {
  const [owned, remedy] = WHAT[cap];
  return conflict(`You have ${limit} ${owned}, the most allowed (${CAP_VARIABLES[cap]}): ${remedy}.`);
}

/** The caps the environment sets, each a whole number from 1 to 1,000,000. */
export function capsFrom(env: Env): OwnershipCaps {
  const cap = (key: keyof OwnershipCaps) => int(env, CAP_VARIABLES[key], DEFAULT_CAPS[key], 1, 1_000_000);
  return { apiTokensPerUser: cap('apiTokensPerUser'), appsPerUser: cap('appsPerUser'), tokensPerApp: cap('tokensPerApp'), webhooksPerUser: cap('webhooksPerUser') };
}
