export type { LookupBudget } from './budget.js';
export type { Caller } from './caller.js';
export { createVerifier, type Verifier } from './create.js';
export type { Logger } from './credential.js';
export { VerifyError, type VerifyErrorCode } from './errors.js';
export type { Middleware } from './express.js';
export type { MetricsRegistry, VerifyOutcome } from './metrics.js';
export type { FastifyPlugin, RouteAuth } from './fastify.js';
export type { VerifierOptions } from './options.js';
