import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import type { DestinationStream } from 'pino';
import { appRoutes } from './apps/routes.js';
import { authRoutes } from './auth/routes.js';
import { clientAddressOf, trustProxyOption } from './http/client-address.js';
import { clientErrorHandler } from './http/client-errors.js';
import { registerDocs, registerOpenApi } from './http/docs.js';
import { createHttpServer, FastPath, type RequestHandler } from './http/fast-path.js';
import { registerGuard } from './http/guard.js';
import { collectRoutes, registerMethodNotAllowed, registerNotFound } from './http/hardening.js';
import { registerRequestLifecycle } from './http/lifecycle.js';
import { BODY_LIMIT, registerJsonBodyParser } from './http/json-body.js';
import { AccessLog, type LevelSource, createAccessLogDestination, createLogDestination, lazyChildLogger, loggerOptions } from './http/logging.js';
import { registerProblemHandler, sendProblem, toProblem } from './http/problem.js';
import { RequestLimits, registerRateLimits } from './http/rate-limit.js';
import { notFound } from './errors.js';
import { Problem } from './http/schemas.js';
import { healthRoutes } from './health/routes.js';
import { checkReadiness } from './health/service.js';
import { keyRoutes } from './keys/routes.js';
import { requestId } from './lib/ids.js';
import { meRoutes } from './me/routes.js';
import type { Services } from './services.js';
import { tokenRoutes } from './tokens/routes.js';
import { VERSION } from './version.js';
import { developersPage } from './web/routes.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** What the HTTP server runs for each request (the fast path, then Fastify); tests inject through it. */
    handleRequest(req: IncomingMessage, res: ServerResponse): void;
    readonly fastPath: FastPath;
  }
}

export interface AppOptions {
  /** Where logs go (default stdout); tests pass a stream to inspect them. */
  readonly logStream?: DestinationStream;
}

/**
 * Builds the HTTP application over ready services. Never listens: tests drive it with `inject()`,
 * the server module calls `listen()`.
 */
export async function createApp(services: Services, options: AppOptions = {}): Promise<FastifyInstance> {
  const { config } = services;
  const destination = options.logStream ?? createLogDestination();
  const limits = new RequestLimits(services.rateLimiter);
  // The access log follows the level of the app's logger, once the app below has created it.
  const accessLog = new AccessLog(config.logLevel, options.logStream ?? createAccessLogDestination());
  const fastPath = new FastPath({ authenticator: services.authenticator, limits, feed: services.feed, accessLog, clientAddress: clientAddressOf(config.trustProxy) });
  const app = Fastify({
    // The server's handler: the fast path of GET /api/me, which hands everything else to Fastify.
    serverFactory: (fastify: RequestHandler, serverOptions) => createHttpServer(serverOptions, (req, res) => fastPath.handle(req, res, fastify)),
    logger: loggerOptions(config.logLevel, destination),
    // Fastify's two lines per request are replaced by one of ours (http/logging.ts).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    childLoggerFactory: lazyChildLogger,
    genReqId: requestId,
    // A client-chosen request id could collide or inject into logs: always make our own.
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT,
    // Slow bodies: the whole request must arrive within 10 s.
    requestTimeout: 10_000,
    return503OnClosing: true,
    // The client address is the socket's unless TRUST_PROXY names the proxies to believe.
    trustProxy: trustProxyOption(config.trustProxy),
    // Long or badly encoded path segments are malformed ids: our 404, not Fastify's 414/400 bodies.
    routerOptions: { maxParamLength: 8192 },
    clientErrorHandler,
    frameworkErrors: (error, request, reply) => sendProblem(request, reply, error.code === 'FST_ERR_BAD_URL' ? notFound() : toProblem(error)),
    ajv: {
      customOptions: {
        // Unknown fields are an error, never silently dropped; types are never coerced.
        removeAdditional: false,
        coerceTypes: false,
        useDefaults: false,
        allErrors: true,
      },
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Fastify made app.log from our options: a pino logger.
  accessLog.follow(app.log as unknown as LevelSource);
  const routes = collectRoutes(app);
  registerRequestLifecycle(app, services.feed, accessLog);
  registerProblemHandler(app);
  registerNotFound(app);
  registerJsonBodyParser(app);
  app.addSchema(Problem);
  await registerOpenApi(app, VERSION);
  registerRateLimits(app, limits);
  registerGuard(app, services.authenticator, limits);

  authRoutes(app, services.accounts);
  meRoutes(app);
  tokenRoutes(app, services.tokens);
  appRoutes(app, services.apps);
  keyRoutes(app, services.keys);
  healthRoutes(app, () => checkReadiness(services.database, services.redis));
  await registerDocs(app);
  developersPage(app);

  await app.after();
  registerMethodNotAllowed(app, routes);
  app.addHook('preClose', (done) => {
    fastPath.close();
    done();
  });
  app.decorate('fastPath', fastPath);
  app.decorate('handleRequest', (req: IncomingMessage, res: ServerResponse) => fastPath.handle(req, res, app.routing));
  await app.ready();
  return app;
}
