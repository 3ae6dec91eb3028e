import Fastify from 'fastify';

/*
 * The example resource server (examples/resource-server) with the token check removed: the same
 * Fastify settings and the same GET /whoami answer, once an `Authorization: Bearer` header is
 * present. The difference to the example is what @rz-auth/verify costs a service per request.
 */

const BODY = { user_id: '0b6f3c1e-2a4d-4c8e-9f10-5a7b3d2e1c90', token_type: 'api_token' };

const app = Fastify({ logger: false });

app.get('/healthz', async () => ({ status: 'ok' }));
app.get('/whoami', async (request, reply) => {
  if (!request.headers.authorization?.startsWith('Bearer ')) return reply.code(401).send({ code: 'unauthorized' });
  return BODY;
});

await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
