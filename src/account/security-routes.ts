import { Type } from 'typebox';
import { contextOf } from '../api/context.js';
import { operation } from '../api/operation.js';
import { type Http, principalOf, USER_TOKEN_ONLY } from '../api/route.js';
import { Amr, IdParams, listPage, NullableTimestamp, PageQuery, Timestamp, Uuid } from '../api/schemas.js';
import { parsePage } from '../lib/pages.js';
import { MAX_USER_AGENT } from '../lib/user-agent.js';
import type { AccountSecurity, SessionView } from './security-service.js';

/** What a password field accepts: the policy (checked by the service) bounds it far below this. */
const Password = Type.String({ maxLength: 4096, examples: ['correct horse battery staple'] });

const PasswordChange = Type.Object(
  {
    current_password: Type.String({ ...Password, description: 'The password in use now.' }),
    new_password: Type.String({
      ...Password,
      description: 'The same rules as at signup: at least 15 characters by default, at most 1024 bytes, not a common password.',
      examples: ['a new and much longer passphrase'],
    }),
  },
  { additionalProperties: false },
);

const PasswordConfirmation = Type.Object(
  { password: Type.String({ ...Password, description: 'The account\'s password, to confirm.' }) },
  { additionalProperties: false },
);

const SessionItem = Type.Object(
  {
    id: Uuid,
    created_at: Timestamp,
    last_used_at: NullableTimestamp,
    ip: Type.Union([Type.String({ maxLength: 64, examples: ['203.0.113.7'] }), Type.Null()], {
      description: 'The client address at login (behind trusted proxies, the one they forwarded).',
    }),
    user_agent: Type.Union([Type.String({ maxLength: MAX_USER_AGENT, examples: ['Mozilla/5.0 (X11; Linux x86_64)'] }), Type.Null()], {
      description: 'The User-Agent at login, without control characters, cut to 256 characters.',
    }),
    amr: Amr,
    auth_time: Type.String({ ...Timestamp, description: 'The last password, second-factor or step-up authentication of the session.' }),
    current: Type.Boolean({ description: 'True for the session of the user token that asked.' }),
  },
  { additionalProperties: false },
);

const SessionList = listPage('sessions', SessionItem, 'Active sessions.');

const toItem = (s: SessionView) => ({
  id: s.id,
  created_at: s.createdAt,
  last_used_at: s.lastUsedAt,
  ip: s.clientAddress,
  user_agent: s.userAgent,
  amr: [...s.amr],
  auth_time: s.authTime,
  current: s.current,
});

/** The signed-in user's password, sessions and account (docs/accounts.md). */
export function sessionRoutes(app: Http, security: AccountSecurity): void {
  app.post('/api/auth/password', {
    ...operation({
      method: 'POST',
      operationId: 'updatePassword',
      tags: ['account'],
      summary: 'Change the password and end every other session',
      description:
        'Needs the current password. Every other session of the user ends at once, on every instance; this one stays. Each attempt counts against the login limits (per address and per the account\'s email); a wrong password is 401 `invalid_credentials`.',
      auth: USER_TOKEN_ONLY,
      rateLimit: 'password',
      body: PasswordChange,
      success: { 204: { description: 'Changed; the other sessions have ended.' } },
      problems: ['invalid_credentials'],
    }),
    handler: async (request, reply) => {
      await security.changePassword(principalOf(request), request.body.current_password, request.body.new_password, contextOf(request));
      return reply.code(204).send(null);
    },
  });

  app.get('/api/auth/sessions', {
    ...operation({
      method: 'GET',
      operationId: 'listSessions',
      tags: ['account'],
      summary: 'List the active sessions of the user',
      description: 'One per login or signup that has not ended or expired, newest first, a page at a time; `current` marks the one asking. A bad `limit` or `cursor` is 400 naming it.',
      auth: USER_TOKEN_ONLY,
      querystring: PageQuery,
      success: { 200: { description: 'A page of the sessions.', schema: SessionList } },
    }),
    handler: async (request) => {
      const listed = await security.list(principalOf(request), parsePage(request.query));
      return { sessions: listed.items.map(toItem), next_cursor: listed.nextCursor };
    },
  });

  app.delete('/api/auth/sessions/:id', {
    ...operation({
      method: 'DELETE',
      operationId: 'revokeSession',
      tags: ['account'],
      summary: 'End one session of the user',
      description: 'Its user token is refused from the next request on, on every instance. Ending the current session is logging out. Unknown, ended or another user\'s session: 404.',
      auth: USER_TOKEN_ONLY,
      params: IdParams,
      success: { 204: { description: 'Ended.' } },
    }),
    handler: async (request, reply) => {
      await security.revoke(principalOf(request), request.params.id, contextOf(request));
      return reply.code(204).send(null);
    },
  });

  app.delete('/api/auth/sessions', {
    ...operation({
      method: 'DELETE',
      operationId: 'revokeOtherSessions',
      tags: ['account'],
      summary: 'End every session of the user but this one',
      description: 'Their user tokens are refused from the next request on, on every instance.',
      auth: USER_TOKEN_ONLY,
      success: { 204: { description: 'Every other session has ended.' } },
    }),
    handler: async (request, reply) => {
      await security.revokeOthers(principalOf(request), contextOf(request));
      return reply.code(204).send(null);
    },
  });

  app.delete('/api/me', {
    ...operation({
      method: 'DELETE',
      operationId: 'deleteMe',
      tags: ['account'],
      summary: 'Delete the account',
      description:
        'Needs the password. The user, their API tokens, apps, app tokens and sessions are deleted; every token of theirs is refused from the next request on, on every instance. The email and username become free again. Each attempt counts against the login limits.',
      auth: USER_TOKEN_ONLY,
      rateLimit: 'password',
      body: PasswordConfirmation,
      success: { 204: { description: 'Deleted.' } },
      problems: ['invalid_credentials'],
    }),
    handler: async (request, reply) => {
      await security.deleteAccount(principalOf(request), request.body.password, contextOf(request));
      return reply.code(204).send(null);
    },
  });
}
