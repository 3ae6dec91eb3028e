import { attenuate, derive, inspect } from '@rz-auth/token';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { createApiToken, json, registerApp, signup, type TestUser } from '../helpers/api.js';
import { newKek } from '../helpers/derived.js';
import { createService, introspect } from '../helpers/platform.js';

/** POST /api/introspect with a derived child (contract §14.6). */
describe('introspecting derived children', () => {
  let t: TestApp;
  let user: TestUser;
  let scoreboard: { token: string };
  let catalogue: { token: string };
  let parent: { id: string; token: string };
  beforeAll(async () => {
    t = await startTestApp({ env: { DERIVE_KEK: newKek() } });
    user = await signup(t);
    scoreboard = await createService(t, 'scoreboard');
    catalogue = await createService(t, 'catalogue');
    parent = await createApiToken(t, user.jwt, { scopes: ['apps:read', 'tokens:read'], allowed_cidrs: ['198.51.100.0/24'], derivable: true });
  });
  afterAll(() => t.close());

  it('the parent type plus derived, parent_id, the child id as jti, its iat, the effective exp, scope, aud and networks', async () => {
    const child = derive(parent.token, { ttl: 900, scopes: ['apps:read'], aud: ['scoreboard', 'rz-auth'], cidrs: ['198.51.100.0/28'], label: 'agent' });
    const read = inspect(child);
    const res = await introspect(t, scoreboard.token, child);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      active: true,
      token_type: 'api_token',
      sub: user.id,
      username: user.username,
      scope: 'apps:read',
      jti: read.childId,
      iat: read.exp - 900,
      exp: read.exp,
      iss: 'rz-auth',
      allowed_cidrs: ['198.51.100.0/28'],
      derived: true,
      parent_id: parent.id,
      aud: ['scoreboard', 'rz-auth'],
    });
  });

  it('an audience that excludes the calling service: {"active":false}, the same bytes as any inactive answer', async () => {
    const child = derive(parent.token, { ttl: 900, aud: ['scoreboard'] });
    const refused = await introspect(t, catalogue.token, child);
    const unknown = await introspect(t, catalogue.token, 'rzd_nothing');
    expect(refused.statusCode).toBe(200);
    expect(refused.body).toBe('{"active":false}');
    expect(refused.body).toBe(unknown.body);
    expect(refused.headers['content-type']).toBe(unknown.headers['content-type']);
    expect((await introspect(t, scoreboard.token, child)).json().active).toBe(true);
    // An intersection without the service excludes it too.
    expect((await introspect(t, scoreboard.token, attenuate(child, { aud: ['catalogue'] }))).body).toBe('{"active":false}');
  });

  it('no aud caveat: any service; an app token child answers as app_token with client_id', async () => {
    const app = await registerApp(t, user.jwt);
    const issued = (await json(t, 'POST', `/api/apps/${app.id}/tokens`, { derivable: true }, user.jwt)).json();
    const answer = (await introspect(t, catalogue.token, derive(issued.token, { ttl: 60 }))).json();
    expect(answer).toMatchObject({ active: true, token_type: 'app_token', client_id: app.id, derived: true, parent_id: issued.token_id });
    expect(answer.aud).toBeUndefined();
  });

  it('a revoked parent: inactive', async () => {
    const p = await createApiToken(t, user.jwt, { derivable: true });
    const child = derive(p.token, { ttl: 60 });
    expect((await introspect(t, catalogue.token, child)).json().active).toBe(true);
    expect((await json(t, 'DELETE', `/api/tokens/${p.id}`, undefined, user.jwt)).statusCode).toBe(204);
    expect((await introspect(t, catalogue.token, child)).body).toBe('{"active":false}');
  });
});
