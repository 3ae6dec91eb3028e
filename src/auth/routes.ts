import { Type } from 'typebox';
import { principalOf } from '../api/route.js';
import { responses, UserSummary } from '../api/schemas.js';
import { type Http, security } from '../api/route.js';
import type { AccountService, SessionGrant } from './service.js';

const Email = Type.String({ maxLength: 320, examples: ['ada@example.com'] });
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

const SessionResponse = Type.Object(
  {
    token: Type.String({ description: 'A user token (JWT, EdDSA). Send it as `Authorization: Bearer <token>`.', examples: ['eyJhbGciOiJFZERTQSIs...'] }),
    user: UserSummary,
  },
  { additionalProperties: false },
);

const toResponse = (grant: SessionGrant) => ({
  token: grant.token,
  user: { id: grant.user.id, username: grant.user.username, email: grant.user.email },
});

/** Signup, login and logout. */
export function authRoutes(app: Http, accounts: AccountService): void {
  app.post('/api/auth/signup', {
    config: { rateLimit: 'signup' },
    schema: {
      tags: ['auth'],
      summary: 'Create an account and log in',
      description: 'Email is trimmed and lower-cased. Closed when SIGNUP_ENABLED=false (then 403).',
      body: SignupBody,
      response: responses({ 201: SessionResponse }, 'validation_failed', 'forbidden', 'conflict', 'unsupported_media_type', 'payload_too_large'),
    },
    handler: async (request, reply) => {
      const grant = await accounts.signup(request.body);
      return reply.code(201).send(toResponse(grant));
    },
  });

  app.post('/api/auth/login', {
    config: { rateLimit: 'login' },
    schema: {
      tags: ['auth'],
      summary: 'Log in with email and password',
      description: 'Any failure is 401 invalid_credentials with the same body, whether or not the account exists.',
      body: LoginBody,
      response: responses({ 200: SessionResponse }, 'validation_failed', 'invalid_credentials', 'unsupported_media_type', 'payload_too_large'),
    },
    handler: async (request) => toResponse(await accounts.login(request.body.email, request.body.password)),
  });

  app.post('/api/auth/logout', {
    config: { auth: {} },
    schema: {
      tags: ['auth'],
      summary: 'Log out: revoke the session behind this user token',
      security: [security.user],
      response: responses({ 204: Type.Null({ description: 'Logged out.' }) }, 'unauthorized', 'invalid_token', 'insufficient_scope'),
    },
    handler: async (request, reply) => {
      await accounts.logout(principalOf(request));
      return reply.code(204).send(null);
    },
  });
}
