import type { LightMyRequestResponse } from 'fastify';
import { type TestApp, startTestApp, tempDir } from './app.js';
import { signup, type TestUser } from './api.js';
import { TestClock } from './clock.js';
import { scopesFileEnv } from './scopes.js';

/** A platform service's credential, made as the operator's CLI makes it. */
export async function createService(t: TestApp, name = 'scoreboard'): Promise<{ id: string; token: string }> {
  const { token, credential } = await t.services.serviceCredentials.create(name);
  return { id: credential.id, token };
}

/** POST /api/introspect with `token`, as a form (what OAuth clients send) or as JSON. */
export function introspect(t: TestApp, serviceToken: string, token: string, as: 'form' | 'json' = 'form'): Promise<LightMyRequestResponse> {
  return t.inject({
    method: 'POST',
    url: '/api/introspect',
    headers: {
      authorization: `Bearer ${serviceToken}`,
      'content-type': as === 'form' ? 'application/x-www-form-urlencoded' : 'application/json',
    },
    payload: as === 'form' ? `token=${encodeURIComponent(token)}` : JSON.stringify({ token }),
  });
}

/** An app with the platform's test scopes (helpers/scopes.ts), a user, a service credential, and the clock it runs on. */
export interface PlatformApp {
  readonly t: TestApp;
  readonly clock: TestClock;
  user: TestUser;
  readonly service: { id: string; token: string };
  close(): Promise<void>;
}

export async function startPlatformApp(): Promise<PlatformApp> {
  const files = tempDir();
  const clock = new TestClock();
  const t = await startTestApp({ clock, env: scopesFileEnv(files.dir) });
  return {
    t,
    clock,
    user: await signup(t),
    service: await createService(t),
    async close() {
      await t.close();
      files.remove();
    },
  };
}
