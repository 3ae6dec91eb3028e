// Like rz-auth's CLI, first: keeps process.nextTick's tick-object literal monomorphic. Without it
// the ceiling sometimes starts in the slow state (under callgrind on Node 24: 97,000 to 106,000
// instructions per request against 60,000 to 61,000 with it), which would flatter every ratio.

import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { SECURITY_HEADERS } from '../src/http/headers.js';

/*
 * The ceiling: the least work a Fastify server can do to answer GET /api/me. It checks that a bearer
 * header is present and sends a fixed body shaped like rz-auth's answer for an API token, so the
 * difference to rz-auth is exactly the cost of authentication (lookup, cache, rate limit, logging).
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

/*
 * Not the ceiling, a reference point: the same answer with the response headers the contract and
 * rz-auth put on every GET /api/me (the security headers, x-request-id, the RateLimit fields), set
 * the way rz-auth sets them. Its ratio to the ceiling is what those headers alone cost, with no
 * authentication, rate limiting or logging at all: the best rz-auth could do.
 */
app.get('/reference/headers/api/me', async (request, reply) => {
  if (!request.headers.authorization?.startsWith('Bearer ')) return reply.code(401).send({ code: 'unauthorized' });
  // rz-auth's request ids are UUIDs; the ceiling keeps Fastify's cheaper counter for its own route.
  reply.headers(SECURITY_HEADERS).header('x-request-id', randomUUID());
  reply.header('ratelimit-policy', '"credential";q=1200;w=60').header('ratelimit', '"credential";r=1199;t=60');
  return BODY;
});

await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
