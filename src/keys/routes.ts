import { Type } from 'typebox';
import { operation } from '../api/operation.js';
import type { Http } from '../api/route.js';
import { type KeyRing, MAX_PUBLISHED_KEYS } from './service.js';

const Jwks = Type.Object(
  {
    keys: Type.Array(
      Type.Object(
        {
          kty: Type.Enum(['OKP']),
          crv: Type.Enum(['Ed25519']),
          x: Type.String({ pattern: '^[A-Za-z0-9_-]{43}$', maxLength: 43, description: 'The public key, base64url.' }),
          kid: Type.String({ format: 'uuid', maxLength: 36 }),
          alg: Type.Enum(['EdDSA']),
          use: Type.Enum(['sig']),
        },
        { additionalProperties: false },
      ),
      { maxItems: MAX_PUBLISHED_KEYS, description: `The keys that verify tokens still unexpired, the newest ${MAX_PUBLISHED_KEYS} at most.` },
    ),
  },
  { additionalProperties: false },
);

/** The public signing keys, so other services can verify user tokens offline. */
export function keyRoutes(app: Http, keys: KeyRing): void {
  app.get('/.well-known/jwks.json', {
    ...operation({
      method: 'GET',
      operationId: 'getJwks',
      tags: ['keys'],
      summary: 'Public keys that verify user tokens (JWKS)',
      description: 'No authentication. Includes retired keys until the tokens they signed have expired. Cached for up to a minute: refetch on an unknown `kid`.',
      auth: 'public',
      rateLimit: 'address',
      success: { 200: { description: 'The key set (RFC 7517).', schema: Jwks } },
    }),
    handler: async (_request, reply) => {
      // Short caching: verifiers pick up a rotation within a minute (and should refetch on an unknown kid).
      reply.header('cache-control', 'public, max-age=60');
      return keys.jwks();
    },
  });
}
