import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { contextOf } from '../api/context.js';
import { operation } from '../api/operation.js';
import { type Http, principalOf, USER_TOKEN_ONLY } from '../api/route.js';
import { UserSummary } from '../api/schemas.js';
import { COMPACT_JWS, MAX_JWT_LENGTH } from '../auth/jwt.js';
import type { AccountService, ClientInfo, SessionGrant } from './service.js';

/*
 * Email, username and password are checked by the account service (it also serves the CLI), which
 * reports every bad field at once in its own words; the schema bounds what it is handed.
 */
const Email = Type.String({ maxLength: 320, description: 'Trimmed, lower-cased and brought to Unicode NFC; at most 254 characters after that.', examples: ['ada@example.com'] });
const Password = Type.String({ maxLength: 4096, examples: ['correct horse battery staple'] });

const SignupBody = Type.Object(
  {
    email: Email,
    username: Type.String({ maxLength: 64, description: '3 to 39 of A-Z a-z 0-9 - _, unique ignoring case.', examples: ['ada'] }),
    password: Type.String({
      ...Password,
      description: 'At least 15 characters by default, at most 1024 bytes; no composition rules; common passwords are refused.',
    }),
  },
  { additionalProperties: false },
);

const LoginBody = Type.Object({ email: Email, password: Password }, { additionalProperties: false });

/** The login body (contract §5), also the second step's (src/account/mfa/login-routes.ts). */
export const SessionResponse = Type.Object(
  {
    token: Type.String({
      pattern: COMPACT_JWS.source,
      maxLength: MAX_JWT_LENGTH,
      description: 'A user token (JWT, EdDSA). Send it as `Authorization: Bearer <token>`.',
      examples: ['eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiIuLi4ifQ.c2lnbmF0dXJl'],
    }),
    user: UserSummary,
  },
  { additionalProperties: false },
);

export const toResponse = (grant: SessionGrant) => ({
  token: grant.token,
  user: { id: grant.user.id, username: grant.user.username, email: grant.user.email },
});

/** Signup, login and logout. `clientAddress` is the one the rate limiter and the access log use. */
export function authRoutes(app: Http, accounts: AccountService, clientAddress: (req: IncomingMessage) => string): void {
  const clientOf = (request: FastifyRequest): ClientInfo => ({ address: clientAddress(request.raw), userAgent: request.headers['user-agent'] });

  app.post('/api/auth/signup', {
    ...operation({
      method: 'POST',
      operationId: 'signUp',
      tags: ['auth'],
      summary: 'Create an account and log in',
      description: 'Creates an account and answers like login. Email is trimmed, lower-cased and brought to Unicode NFC (é precomposed or with a combining accent is one address). Closed when SIGNUP_ENABLED=false (then 403 `forbidden`).',
      auth: 'public',
      rateLimit: 'signup',
      body: SignupBody,
      success: { 201: { description: 'Signed up: a user token and the new account.', schema: SessionResponse } },
      problems: ['forbidden', 'conflict'],
    }),
    handler: async (request, reply) => {
      const grant = await accounts.signup(request.body, contextOf(request), clientOf(request));
      return reply.code(201).send(toResponse(grant));
    },
  });

  app.post('/api/auth/login', {
    ...operation({
      method: 'POST',
      operationId: 'logIn',
      tags: ['auth'],
      summary: 'Log in with email and password',
      description:
        'Any failure is 401 `invalid_credentials` with the same body, whether or not the account exists. For an account with a second factor, the right password is answered 401 `mfa_required` with an `mfa_token` for POST /api/auth/mfa/verify (docs/mfa.md).',
      auth: 'public',
      rateLimit: 'login',
      body: LoginBody,
      success: { 200: { description: 'Logged in: a user token and the account.', schema: SessionResponse } },
      problems: ['invalid_credentials', 'mfa_required'],
    }),
    handler: async (request) => toResponse(await accounts.login(request.body.email, request.body.password, contextOf(request), clientOf(request))),
  });

  app.post('/api/auth/logout', {
    ...operation({
      method: 'POST',
      operationId: 'logOut',
      tags: ['auth'],
      summary: 'Log out: revoke the session behind this user token',
      description: 'The user token stops working on the next request, on every instance. API and app tokens cannot log out (403).',
      auth: USER_TOKEN_ONLY,
      success: { 204: { description: 'Logged out.' } },
    }),
    handler: async (request, reply) => {
      await accounts.logout(principalOf(request), contextOf(request));
      return reply.code(204).send(null);
    },
  });
}
