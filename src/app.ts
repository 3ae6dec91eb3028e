import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import type { DestinationStream } from 'pino';
import { appRoutes } from './apps/routes.js';
import { appTokenRoutes } from './apps/token-routes.js';
import { introspectionRoutes } from './auth/introspection-routes.js';
import { auditRoutes } from './audit/routes.js';
import { authRoutes } from './account/routes.js';
import { emailRoutes } from './account/email-routes.js';
import { mfaLoginRoutes } from './account/mfa/login-routes.js';
import { factorRoutes } from './account/mfa/factor-routes.js';
import { passkeyRoutes } from './account/mfa/passkey-routes.js';
import { webauthnFactorRoutes } from './account/mfa/webauthn-factor-routes.js';
import { clientAddressOf } from './http/client-address.js';
import { clientErrorHandler } from './http/client-errors.js';
import { registerCors } from './http/cors.js';
import { registerDocs, registerOpenApi } from './http/docs.js';
import { registerFormBodyParser } from './http/form-body.js';
import { answerConnect } from './http/framing.js';
import { registerGuard } from './http/guard.js';
import { registerEmailVerification } from './http/email-verification.js';
import { collectRoutes, refuseUnexpectedBodies, registerMethodNotAllowed, registerNotFound } from './http/hardening.js';
import { registerRequestLifecycle } from './http/lifecycle.js';
import { BODY_LIMIT, registerJsonBodyParser } from './http/json-body.js';
import { accessLine, createLogDestination, loggerOptions, registerAccessLog } from './http/logging.js';
import { registerProblemHandler, sendProblem, toProblem } from './http/problem.js';
import { RequestLimits, registerRateLimits } from './http/rate-limit.js';
import { notFound } from './errors.js';
import { MAX_PARAM_LENGTH, Problem, SERVICE_CHECKED_FORMATS } from './api/schemas.js';
import { healthRoutes } from './health/routes.js';
import { checkReadiness } from './health/service.js';
import { eventRoutes } from './events/routes.js';
import { keyRoutes } from './keys/routes.js';
import { leakRoutes } from './tokens/leaks/routes.js';
import { requestId } from './lib/ids.js';
import { meRoutes } from './account/me-routes.js';
import { scopeRoutes } from './scopes/routes.js';
import { sessionRoutes } from './account/security-routes.js';
import type { Services } from './composition-root.js';
import { tokenLifecycleRoutes } from './tokens/lifecycle-routes.js';
import { tokenRoutes } from './tokens/routes.js';
import { VERSION } from './version.js';
import { developersPage } from './web/routes.js';
import { webhookRoutes } from './webhooks/routes.js';
import { approvalRoutes } from './oauth/approval-routes.js';
import { metadataRoute, oauthRoutes } from './oauth/routes.js';
import { registerOAuthHttp } from './http/oauth-body.js';
import { seriesOf } from './observability/metrics/series.js';

export interface AppOptions {
  /** Where logs go (default stdout); tests pass a stream to inspect them. */
  readonly logStream?: DestinationStream;
}

/** The whole request (line, headers, body) must arrive within this; then 408 request_timeout. */
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * Builds the HTTP application over ready services. Never listens: tests drive it with `inject()`,
 * the server module calls `listen()`.
 */
export async function createApp(services: Services, options: AppOptions = {}): Promise<FastifyInstance> {
  const { config } = services;
  const destination = options.logStream ?? createLogDestination();
  const clientAddress = clientAddressOf(config.trustProxy);
  const counts = services.metrics && seriesOf(services.metrics);
  const limits = new RequestLimits(services.rateLimiter, clientAddress, counts?.rejections);
  const accessLog = accessLine(clientAddress, counts?.http);
  const app = Fastify({
    logger: loggerOptions(config.logLevel, destination, services.tracing),
    // Fastify's two lines per request are replaced by one of ours (http/logging.ts).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId: requestId,
    // A client-chosen request id could collide or inject into logs: always make our own.
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT,
    // Slow requests: the whole request must arrive within 10 s. Also given in `http` below, where
    // Node reads it when the server is made: set afterwards, as this option alone does, it would
    // not apply to a body that stalls.
    requestTimeout: REQUEST_TIMEOUT_MS,
    // During a shutdown http/lifecycle.ts answers 503 `unavailable` as a problem, not Fastify.
    return503OnClosing: false,
    // Long or badly encoded path segments are malformed ids: our 404, not Fastify's 414/400 bodies.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    clientErrorHandler,
    // Node answers a request without Host with an empty 400 of its own; http/framing.ts refuses it
    // with a problem body and the usual headers instead.
    // Node checks requestTimeout every connectionsCheckingInterval (30 s by default, so a stalled
    // request could hold its connection for up to 40 s): every second instead.
    http: { requireHostHeader: false, requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: 1000 },
    // A URL Fastify cannot route (see routerOptions) is answered outside any route's hooks, the
    // access log's included: its line is written here.
    frameworkErrors: (error, request, reply) => {
      reply.raw.once('finish', () => accessLog(request.server.log, request, reply));
      sendProblem(request, reply, error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? notFound() : toProblem(error));
    },
    ajv: {
      customOptions: {
        // Unknown fields are an error, never silently dropped; types are never coerced.
        removeAdditional: false,
        coerceTypes: false,
        useDefaults: false,
        allErrors: true,
        formats: SERVICE_CHECKED_FORMATS,
      },
    },
    serializerOpts: { ajv: { formats: SERVICE_CHECKED_FORMATS } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Node keeps only the first 2,000 raw header lines by default, and a repeated Authorization or
  // Host past them would go unseen; the 16 KiB header limit (431) bounds them instead.
  app.server.maxHeadersCount = 0;
  // A client that closes its sending side after the request still wants the answer (RFC 9112
  // §9.6). Node's default ends the connection on that, losing every answer not ready at once;
  // with this, the connection ends once the answer is sent.
  Object.assign(app.server, { httpAllowHalfOpen: true });

  app.decorate('clientAddress', clientAddress);
  // First, so that every hook after it runs inside the request's span.
  await services.tracing.instrument(app);
  const routes = collectRoutes(app);
  refuseUnexpectedBodies(app);
  registerRequestLifecycle(app, services.feed);
  registerAccessLog(app, accessLog);
  await registerCors(app, services.config.corsOrigins);
  registerProblemHandler(app, { explain: (field, value, message) => services.scopes.explainRefusal(field, value, message) });
  registerNotFound(app);
  registerJsonBodyParser(app);
  app.addSchema(Problem);
  const document = await registerOpenApi(app, VERSION, services.config.corsOrigins);
  registerRateLimits(app, limits);
  registerGuard(app, services.authenticator, limits, clientAddress, { decisions: counts?.decisions ?? null, tracing: services.tracing });
  registerEmailVerification(app, config.accountEmail.verificationRequired);
  services.mfa.stepUp.register(app, counts?.decisions ?? null);

  authRoutes(app, services.accounts, clientAddress);
  mfaLoginRoutes(app, services.mfa, services.accounts, clientAddress);
  factorRoutes(app, services.mfa.factors);
  passkeyRoutes(app, services.mfa, services.accounts, clientAddress);
  webauthnFactorRoutes(app, services.mfa.webauthn);
  sessionRoutes(app, services.accountSecurity);
  meRoutes(app, services.mfa.requirement.on ? (userId) => services.mfa.requirement.requiredBy(userId) : null);
  emailRoutes(app, services.email.flows);
  tokenRoutes(app, services.tokens, services.scopes);
  tokenLifecycleRoutes(app, services.lifecycle);
  appTokenRoutes(app, services.lifecycle);
  appRoutes(app, services.apps, services.scopes);
  scopeRoutes(app, services.scopes);
  auditRoutes(app, services.auditLog);
  webhookRoutes(app, services.webhooks);
  leakRoutes(app, services.leaks);
  // Introspection takes form bodies too, as OAuth clients send them; no other route sees that parser.
  await app.register(async (forms) => {
    registerFormBodyParser(forms);
    introspectionRoutes(forms, services.introspector, counts?.introspections);
  });
  // The device flow (docs/device-flow.md); its OAuth endpoints in a context whose bodies and errors follow RFC 6749.
  metadataRoute(app, services.device, services.scopes);
  approvalRoutes(app, services.device, (request, policy, key, points) => limits.enforce(request, policy, key, points), services.mfa.stepUp);
  await app.register(async (oauth) => {
    registerOAuthHttp(oauth);
    oauthRoutes(oauth, services.device);
  });
  eventRoutes(app, services.events);
  keyRoutes(app, services.keys);
  healthRoutes(app, () => checkReadiness(services.database, services.redis));
  await registerDocs(app, document);
  developersPage(app, { mail: services.mail !== null, mfaRequired: services.config.mfa.required, passkeys: services.config.mfa.webauthn !== null });

  await app.after();
  registerMethodNotAllowed(app, routes);
  // An expectation other than 100-continue is ignored, as RFC 9110 §10.1.1 allows, and the request
  // answered as any other, instead of Node's bare 417.
  app.server.on('checkExpectation', app.routing);
  // CONNECT is answered too (405 or 404), not dropped unanswered.
  app.server.on('connect', answerConnect(app.routing));
  await app.ready();
  return app;
}
