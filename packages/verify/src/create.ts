import type { Caller } from './caller.js';
import { expressMiddlewareFor, type Middleware } from './express.js';
import { type FastifyPlugin, fastifyPluginFor } from './fastify.js';
import { settingsOf, type VerifierOptions } from './options.js';
import { Engine, type VerifierCore } from './verifier.js';

export interface Verifier extends VerifierCore {
  /** Register with `app.register(verifier.fastifyPlugin)`; routes opt in with `config: { rzAuth: … }`. */
  readonly fastifyPlugin: FastifyPlugin;
  /** A middleware that sets `req.caller` once the token holds every scope named. */
  expressMiddleware(...scopes: string[]): Middleware;
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
    get streaming() {
      return engine.streaming;
    },
    get cacheSize() {
      return engine.cacheSize;
    },
    close: () => engine.close(),
    fastifyPlugin: fastifyPluginFor(engine),
    expressMiddleware: (...scopes) => expressMiddlewareFor(engine, scopes),
  };
}
