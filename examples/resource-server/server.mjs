// A platform service (a game catalogue) that checks rz-auth's tokens with @rz-auth/verify.
// Configured by PORT, RZ_AUTH_URL and RZ_SERVICE_TOKEN (from `rz-auth services create`); HOST
// defaults to 127.0.0.1; METRICS_PORT, when set, serves the verifier's metrics on
// http://HOST:METRICS_PORT/metrics. See README.md beside it.
import { randomUUID } from 'node:crypto';
import process from 'node:process';
import { createVerifier } from '@rz-auth/verify';
import Fastify from 'fastify';

function fail(message) {
  process.stderr.write(`resource-server: ${message}\n`);
  process.exit(1);
}

const { PORT = '3001', HOST = '127.0.0.1', RZ_AUTH_URL, RZ_SERVICE_TOKEN, METRICS_PORT } = process.env;
if (!RZ_AUTH_URL) fail('RZ_AUTH_URL is required: the base URL of rz-auth, e.g. http://127.0.0.1:3000');
if (!RZ_SERVICE_TOKEN) fail('RZ_SERVICE_TOKEN is required: a service credential (rzs_...) from `rz-auth services create`');
const port = Number(PORT);
if (!Number.isInteger(port) || port < 0 || port > 65535) fail('PORT must be a port number');
const metricsPort = METRICS_PORT === undefined ? null : Number(METRICS_PORT);
if (metricsPort !== null && (!Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535)) fail('METRICS_PORT must be a port number');
// The verifier's rz_verify_* series, and Node's own, in a registry of this service's.
const registry = metricsPort === null ? undefined : new (await import('prom-client')).Registry();

let verifier;
try {
  verifier = createVerifier({
    url: RZ_AUTH_URL,
    serviceToken: RZ_SERVICE_TOKEN,
    realm: 'games',
    // Lookups of uncached tokens one client address may cause (the default, spelled out): a client
    // making up tokens gets 429 past it instead of spending rz-auth's budget for this service.
    lookupsPerAddress: { burst: 100, perSecond: 10 },
    onStreamError: (error) => process.stderr.write(`resource-server: rz-auth event stream: ${error?.message ?? error}\n`),
    metrics: registry,
  });
} catch (error) {
  fail(error.message);
}

const app = Fastify({ logger: false });
await app.register(verifier.fastifyPlugin);

// Liveness, and whether rz-auth's event stream is up (while it is down every token costs a request to rz-auth).
app.get('/healthz', async () => ({ status: 'ok', events: verifier.streaming ? 'up' : 'down' }));

// Any valid token: a user's JWT, an API token or an app token.
app.get('/whoami', { config: { rzAuth: true } }, async (request) => ({ user_id: request.caller.userId, token_type: request.caller.tokenType }));

const NewGame = {
  type: 'object',
  required: ['title'],
  additionalProperties: false,
  properties: { title: { type: 'string', minLength: 1, maxLength: 100 } },
};

// Only tokens holding the platform scope games:publish (declared in rz-auth's SCOPES_FILE).
app.post('/games', { config: { rzAuth: { scopes: ['games:publish'] } }, schema: { body: NewGame } }, async (request, reply) =>
  reply.code(201).send({ id: randomUUID(), title: request.body.title, published_by: request.caller.userId }),
);

// Making a game public is a person's decision: a user token holding games:publish whose login is
// at most 5 minutes old and used a second factor (step-up, RFC 9470). An API or app token is
// refused 403; an older or password-only login gets the 401 challenge, answered with
// POST /api/auth/reauth at rz-auth.
app.post('/games/:id/publish', { config: { rzAuth: { scopes: ['games:publish'], mfa: true, maxAge: 300 } } }, async (request) => ({
  id: request.params.id,
  published_by: request.caller.userId,
}));

// Metrics on a port of their own, so that they are never served to the service's callers.
const metrics = registry && Fastify({ logger: false });
metrics?.get('/metrics', async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()));

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await app.close();
    await metrics?.close();
    await verifier.close();
  });
}

await app.listen({ port, host: HOST });
process.stdout.write(`resource-server listening on http://${HOST}:${app.server.address().port}\n`);
if (metrics) {
  await metrics.listen({ port: metricsPort, host: HOST });
  process.stdout.write(`resource-server metrics on http://${HOST}:${metrics.server.address().port}/metrics\n`);
}
