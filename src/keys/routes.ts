import { Type } from 'typebox';
import { responses } from '../api/schemas.js';
import type { Http } from '../api/route.js';
import type { KeyRing } from './service.js';

const Jwks = Type.Object(
  {
    keys: Type.Array(
      Type.Object({
        kty: Type.String(),
        crv: Type.String(),
        x: Type.String(),
        kid: Type.String(),
        alg: Type.String(),
        use: Type.String(),
      }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);

/** The public signing keys, so other services can verify user tokens offline. */
export function keyRoutes(app: Http, keys: KeyRing): void {
  app.get('/.well-known/jwks.json', {
    config: { rateLimit: 'address' },
    schema: {
      tags: ['keys'],
      summary: 'Public keys that verify user tokens (JWKS)',
      description: 'No authentication. Includes retired keys until the tokens they signed have expired.',
      response: responses({ 200: Jwks }),
    },
    handler: async (_request, reply) => {
      // Short caching: verifiers pick up a rotation within a minute (and should refetch on an unknown kid).
      reply.header('cache-control', 'public, max-age=60');
      return keys.jwks();
    },
  });
}
