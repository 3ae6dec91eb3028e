import { Type } from 'typebox';
import { operation } from '../api/operation.js';
import { type Http, principalOf } from '../api/route.js';
import { IdParams, listPage, NullableTimestamp, PageParams, ScopeNames, Timestamp, Uuid } from '../api/schemas.js';
import { parsePage } from '../lib/pages.js';
import type { TokenLifecycle } from '../tokens/lifecycle.js';
import { Hint, LastUsed } from '../tokens/lifecycle-routes.js';
import type { ListedToken } from '../tokens/list-store.js';
import { ENDED_VISIBLE, EndFields, StateParam } from '../tokens/state-schemas.js';

const AppTokenItem = Type.Object(
  { id: Uuid, hint: Hint, scopes: ScopeNames, created_at: Timestamp, expires_at: NullableTimestamp, last_used_at: LastUsed, ...EndFields },
  { additionalProperties: false },
);

const AppTokensQuery = Type.Object({ ...PageParams, state: StateParam }, { additionalProperties: false });

const appTokenItem = (t: ListedToken) => ({
  id: t.id,
  hint: t.hint,
  scopes: [...t.scopes],
  created_at: t.createdAt,
  expires_at: t.expiresAt,
  last_used_at: t.lastUsedAt,
  state: t.state,
  revoked_at: t.revokedAt,
});

/** An app's tokens as their owner lists them; issuing one is POST /api/apps/{id}/tokens (routes.ts). */
export function appTokenRoutes(app: Http, lifecycle: TokenLifecycle): void {
  app.get('/api/apps/:id/tokens', {
    ...operation({
      method: 'GET',
      operationId: 'listAppTokens',
      tags: ['apps'],
      summary: "List an app's tokens, newest first",
      description: `The app's tokens in \`state\` (active by default), a page at a time. ${ENDED_VISIBLE} Never a token value. Someone else's app is 404, like one that does not exist. A bad \`limit\`, \`cursor\` or \`state\` is 400 naming it.`,
      auth: { api: 'apps:read' },
      params: IdParams,
      querystring: AppTokensQuery,
      success: { 200: { description: "A page of the app's tokens.", schema: listPage('tokens', AppTokenItem, "The app's tokens in the state asked for.") } },
    }),
    handler: async (request) => {
      const { state = 'active', ...page } = request.query;
      const listed = await lifecycle.appTokens(principalOf(request).user.id, request.params.id, state, parsePage(page));
      return { tokens: listed.items.map(appTokenItem), next_cursor: listed.nextCursor };
    },
  });
}
