import { Type } from 'typebox';
import { operation } from '../api/operation.js';
import { type Http, principalOf } from '../api/route.js';
import { IdParams, NullableTimestamp, ScopeNames, Timestamp, Uuid } from '../api/schemas.js';
import type { TokenLifecycle } from '../tokens/lifecycle.js';
import { Hint, LastUsed } from '../tokens/lifecycle-routes.js';

const AppTokenItem = Type.Object(
  { id: Uuid, hint: Hint, scopes: ScopeNames, created_at: Timestamp, expires_at: NullableTimestamp, last_used_at: LastUsed },
  { additionalProperties: false },
);

/** An app's tokens as their owner lists them; issuing one is POST /api/apps/{id}/tokens (routes.ts). */
export function appTokenRoutes(app: Http, lifecycle: TokenLifecycle): void {
  app.get('/api/apps/:id/tokens', {
    ...operation({
      method: 'GET',
      operationId: 'listAppTokens',
      tags: ['apps'],
      summary: "List an app's active tokens, newest first",
      description: "Never a token value. Someone else's app is 404, like one that does not exist.",
      auth: { api: 'apps:read' },
      params: IdParams,
      success: { 200: { description: "The app's active tokens.", schema: Type.Object({ tokens: Type.Array(AppTokenItem) }, { additionalProperties: false }) } },
    }),
    handler: async (request) => ({
      tokens: (await lifecycle.appTokens(principalOf(request).user.id, request.params.id)).map((t) => ({
        id: t.id,
        hint: t.hint,
        scopes: [...t.scopes],
        created_at: t.createdAt,
        expires_at: t.expiresAt,
        last_used_at: t.lastUsedAt,
      })),
    }),
  });
}
