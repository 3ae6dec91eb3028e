import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import createClient from 'openapi-fetch';
// Generated from the running service: `npm run generate` (see README.md).
import type { components, paths } from './openapi.js';

type Problem = components['schemas']['Problem'];

/** An rz-auth client for one credential (none for signup and login). */
export const rzAuth = (baseUrl: string, token?: string) =>
  createClient<paths>({ baseUrl, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });

/** The data of a success, or an Error naming the operation and the problem's stable `code`. */
function ok<T>(what: string, result: { data?: T; error?: Problem; response: Response }): T {
  if (result.data !== undefined) return result.data;
  throw new Error(`${what}: ${result.response.status} ${result.error?.code ?? ''} ${result.error?.detail ?? ''}`.trim());
}

/** What the tour made, by id. */
export interface Tour {
  readonly userId: string;
  readonly apiTokenId: string;
  readonly listedTokenIds: string[];
  readonly appId: string;
  readonly appTokenId: string;
  readonly appReadWithApiToken: string;
}

/** Signs up, logs in, creates and lists API tokens and registers an app: every call typed. */
export async function tour(baseUrl: string): Promise<Tour> {
  const id = randomUUID().slice(0, 8);
  const account = { email: `ada-${id}@example.com`, username: `ada_${id}`, password: 'correct horse battery staple' };
  const anonymous = rzAuth(baseUrl);
  const signedUp = ok('signUp', await anonymous.POST('/api/auth/signup', { body: account }));
  const session = ok('logIn', await anonymous.POST('/api/auth/login', { body: { email: account.email, password: account.password } }));

  const user = rzAuth(baseUrl, session.token);
  const created = ok('createApiToken', await user.POST('/api/tokens', { body: { name: 'deploy script', scopes: ['apps:read', 'tokens:read'] } }));
  const listed = ok('listApiTokens', await user.GET('/api/tokens'));
  const registered = ok('registerApp', await user.POST('/api/apps', { body: { name: 'Space Invaders', description: 'A retro shooter.' } }));

  // The API token can read the app (apps:read); the value was shown once, in `created`.
  const script = rzAuth(baseUrl, created.token);
  const app = ok('getApp', await script.GET('/api/apps/{id}', { params: { path: { id: registered.id } } }));

  return {
    userId: signedUp.user.id,
    apiTokenId: created.id,
    listedTokenIds: listed.tokens.map((t) => t.id),
    appId: registered.id,
    appTokenId: registered.token_id,
    appReadWithApiToken: app.name,
  };
}

// `npm start` (RZ_AUTH_URL, default http://localhost:3000) runs the tour against a running server.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(JSON.stringify(await tour(process.env.RZ_AUTH_URL ?? 'http://localhost:3000'), null, 2));
}
