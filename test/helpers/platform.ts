import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from './app.js';

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
