import type { Caller } from './caller.js';
import { expressMiddlewareFor, type Middleware } from './express.js';
import { type FastifyPlugin, fastifyPluginFor } from './fastify.js';
import { settingsOf, type VerifierOptions } from './options.js';
import { type RouteRequirement, requirementOf } from './requirement.js';
import { Engine, type VerifierCore } from './verifier.js';

export interface Verifier extends VerifierCore {
  /** Register with `app.register(verifier.fastifyPlugin)`; routes opt in with `config: { rzAuth: … }`. */
  readonly fastifyPlugin: FastifyPlugin;
  /** A middleware that sets `req.caller` once the token holds every scope named. */
  expressMiddleware(...scopes: string[]): Middleware;
  /** A middleware that sets `req.caller` once the token holds every scope and, with `mfa` or `maxAge`, is a user login that meets them. */
  expressMiddleware(requirement: RouteRequirement): Middleware;
}

/**
 * A verifier of rz-auth tokens for one platform service. It opens rz-auth's event stream at once
 * and keeps it open until {@link Verifier.close}. Throws a TypeError naming a bad option.
 */
export function createVerifier(options: VerifierOptions): Verifier {
  const engine = new Engine(settingsOf(options));
  return {
    verify: (authorization, clientAddress): Promise<Caller> => engine.verify(authorization, clientAddress),
    requireScopes: (caller, ...scopes) => engine.requireScopes(caller, ...scopes),
    requireAuth: (caller, requirement) => engine.requireAuth(caller, requirement),
    get streaming() {
      return engine.streaming;
    },
    get cacheSize() {
      return engine.cacheSize;
    },
    close: () => engine.close(),
    fastifyPlugin: fastifyPluginFor(engine),
    expressMiddleware: (...args: [RouteRequirement] | string[]) =>
      expressMiddlewareFor(engine, typeof args[0] === 'object' && args.length === 1 ? requirementOf(args[0], 'expressMiddleware') : requirementOf({ scopes: args }, 'expressMiddleware')),
  };
}
