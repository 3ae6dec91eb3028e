import type { Caller } from './caller.js';
import { VerifyError } from './errors.js';
import { authorizationOf } from './header.js';
import { enforce, type Requirement, type RouteRequirement, requirementOf } from './requirement.js';
import { refusalBody, refusalHeaders } from './respond.js';
import type { VerifierCore } from './verifier.js';

/*
 * The Fastify plugin, written against the few members it uses so that the package needs no
 * Fastify (nor fastify-plugin) of its own.
 */

/**
 * A route's option: `config: { rzAuth: true }` for any valid token, `{ rzAuth: { scopes: [...] } }`
 * to require scopes, with `mfa` and/or `maxAge` to require a user login as `requireAuth` does.
 */
export type RouteAuth = true | RouteRequirement;

interface RequestLike {
  readonly headers: { readonly authorization?: string | undefined };
  readonly raw: { readonly rawHeaders: readonly string[] };
  /** The client address, after the instance's `trustProxy` setting. */
  readonly ip: string;
  /** The matched route's options (its `config` holds `rzAuth`); Fastify 4.10 and later. */
  readonly routeOptions: { readonly config?: unknown };
  caller?: Caller | null;
}

interface ReplyLike {
  code(status: number): ReplyLike;
  headers(values: Record<string, string>): ReplyLike;
  send(payload: string): ReplyLike;
}

type Hook = (request: RequestLike, reply: ReplyLike) => Promise<unknown>;

interface RouteOptionsLike {
  readonly config?: unknown;
}

export interface FastifyLike {
  decorateRequest(name: 'caller', value: null): unknown;
  addHook(name: 'onRoute', hook: (route: RouteOptionsLike) => void): unknown;
  addHook(name: 'onRequest', hook: Hook): unknown;
}

export type FastifyPlugin = ((instance: FastifyLike, options: unknown, done: (error?: Error) => void) => void) & {
  readonly [key: symbol]: unknown;
};

const ANY_TOKEN: Requirement = Object.freeze({ scopes: Object.freeze([]), auth: null });

function routeAuthOf(config: unknown): Requirement | null {
  if (typeof config !== 'object' || config === null || !('rzAuth' in config)) return null;
  const auth = (config as { rzAuth: unknown }).rzAuth;
  if (auth === true) return ANY_TOKEN;
  return requirementOf(auth, 'rzAuth route option: true or { scopes?: string[], mfa?: boolean, maxAge?: seconds }');
}

/** Each route's demands, read from its config once (configs are the route's own objects). */
const requirementOfConfig = new WeakMap<object, Requirement | null>();
function demandsOf(config: unknown): Requirement | null {
  if (typeof config !== 'object' || config === null) return null;
  let requirement = requirementOfConfig.get(config);
  if (requirement === undefined) requirementOfConfig.set(config, (requirement = routeAuthOf(config)));
  return requirement;
}

function hookFor(core: VerifierCore): Hook {
  return async (request, reply) => {
    const requirement = demandsOf(request.routeOptions.config);
    if (requirement === null) return undefined;
    try {
      const caller = await core.verify(authorizationOf({ headers: request.headers, rawHeaders: request.raw.rawHeaders }), request.ip);
      enforce(core, caller, requirement);
      request.caller = caller;
    } catch (error) {
      if (!(error instanceof VerifyError)) throw error;
      return reply.code(error.status).headers(refusalHeaders(error)).send(refusalBody(error));
    }
    return undefined;
  };
}

/**
 * Decorates every request with `caller` (null until authenticated) and authenticates the routes
 * declared with the `rzAuth` option in an onRequest hook of the instance: before the body is read,
 * so a refused request costs no parsing, and before the route's own hooks. The hook reads the
 * matched route's config on each request, so it covers every route of the instance and of its
 * children, declared before or after the plugin (a hook attached route by route when declared
 * missed routes declared first, or while the plugin's registration was still queued). Marked
 * skip-override (as fastify-plugin does) so the decoration and the hook reach the instance it is
 * registered on. A route's bad option throws when the route is declared after the plugin, at the
 * first request otherwise.
 */
export function fastifyPluginFor(core: VerifierCore): FastifyPlugin {
  const plugin = (instance: FastifyLike, _options: unknown, done: (error?: Error) => void): void => {
    instance.decorateRequest('caller', null);
    instance.addHook('onRoute', (route) => void demandsOf(route.config));
    instance.addHook('onRequest', hookFor(core));
    done();
  };
  return Object.assign(plugin, { [Symbol.for('skip-override')]: true, [Symbol.for('fastify.display-name')]: '@rz-auth/verify' });
}
