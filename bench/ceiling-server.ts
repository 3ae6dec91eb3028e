import Fastify from 'fastify';

/*
 * The ceiling: the least work a Fastify server can do to answer GET /api/me. It checks that a bearer
 * header is present and sends a fixed body shaped like rz-auth's answer for an API token, so the
 * difference to rz-auth is the cost of authentication (lookup, cache, rate limit, headers, logging).
 */

const BODY = {
  id: '0b6f3c1e-2a4d-4c8e-9f10-5a7b3d2e1c90',
  username: 'bench',
  email: 'bench@example.com',
  auth: { type: 'api_token', token_id: '5a7b3d2e-1c90-4c8e-9f10-0b6f3c1e2a4d', scopes: [], expires_at: null },
};

const app = Fastify({ logger: false });

app.get('/api/me', async (request, reply) => {
  if (!request.headers.authorization?.startsWith('Bearer ')) return reply.code(401).send({ code: 'unauthorized' });
  return BODY;
});

await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
