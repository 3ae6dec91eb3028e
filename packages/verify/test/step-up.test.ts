import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Caller, VerifyError } from '../src/index.js';
import { LAG_S, mfaRzAuth } from './mfa-rz-auth.js';

/** requireAuth (contract §12.5, RFC 9470) against a real rz-auth issuing JWTs with amr and auth_time. */

const rz = mfaRzAuth();
const caller = (token: string): Promise<Caller> => rz.verifier.verify(`Bearer ${token}`);

/** What requireAuth threw for `token`, or null. */
async function refusal(token: string, requirement?: Parameters<typeof rz.verifier.requireAuth>[1]): Promise<VerifyError | null> {
  const who = await caller(token);
  try {
    rz.verifier.requireAuth(who, requirement);
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(VerifyError);
    return error as VerifyError;
  }
}

const challenge = (maxAge?: number) => `Bearer realm="rz", error="insufficient_user_authentication"${maxAge === undefined ? '' : `, max_age="${maxAge}"`}`;

describe('requireAuth', () => {
  it("exposes a user JWT's signed amr and auth_time on the caller; none on an API token", async () => {
    const totp = await caller(rz.withTotp);
    expect(totp.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(Math.abs(Date.now() - LAG_S * 1000 - (totp.authTime?.getTime() ?? 0))).toBeLessThan(60_000);
    expect((await caller(rz.passwordOnly)).amr).toEqual(['pwd']);
    const api = await caller(rz.apiToken);
    expect([api.amr, api.authTime]).toEqual([undefined, undefined]);
  });

  it('mfa: a password-only login gets the 401 challenge (without max_age when none was asked); a TOTP login passes', async () => {
    const error = await refusal(rz.passwordOnly, { mfa: true });
    expect([error?.status, error?.code, error?.wwwAuthenticate]).toEqual([401, 'insufficient_user_authentication', challenge()]);
    expect(error?.message).toMatch(/POST \/api\/auth\/reauth/);
    expect(await refusal(rz.withTotp, { mfa: true })).toBeNull();
  });

  it('maxAge: a login older than maxAge gets the challenge naming max_age, a younger one passes, mfa or not', async () => {
    for (const token of [rz.withTotp, rz.passwordOnly]) {
      const old = await refusal(token, { maxAge: LAG_S - 60 });
      expect([old?.status, old?.code, old?.wwwAuthenticate]).toEqual([401, 'insufficient_user_authentication', challenge(LAG_S - 60)]);
      expect(await refusal(token, { maxAge: LAG_S + 60 })).toBeNull();
    }
    const both = await refusal(rz.passwordOnly, { mfa: true, maxAge: LAG_S + 60 });
    expect(both?.wwwAuthenticate).toBe(challenge(LAG_S + 60));
  });

  it('a reauth with the second factor yields a token that passes a tight maxAge with mfa', async () => {
    const fresh = await rz.freshTotp();
    expect(await refusal(fresh, { mfa: true, maxAge: 60 })).toBeNull();
    expect(await refusal(rz.withTotp, { mfa: true, maxAge: 60 })).not.toBeNull();
  });

  it('an API token, whatever is asked, is 403 insufficient_scope saying a user login is needed', async () => {
    for (const requirement of [undefined, { mfa: true }, { maxAge: 900 }]) {
      const error = await refusal(rz.apiToken, requirement);
      expect([error?.status, error?.code, error?.wwwAuthenticate]).toEqual([403, 'insufficient_scope', 'Bearer realm="rz", error="insufficient_scope"']);
      expect(error?.message).toMatch(/needs a user login/);
    }
    expect(await refusal(rz.passwordOnly)).toBeNull();
  });

  it('a requirement that is not one throws a TypeError instead of demanding nothing', async () => {
    const who = await caller(rz.withTotp);
    for (const bad of [{ maxAge: 0 }, { maxAge: 1.5 }, { maxAge: '900' }, { maxAge: 900_000_000_000 }, { mfa: 'yes' }, null]) {
      expect(() => rz.verifier.requireAuth(who, bad as never), JSON.stringify(bad)).toThrow(TypeError);
    }
    expect(() => rz.verifier.expressMiddleware({ mfa: 1 } as never)).toThrow(/mfa/);
    const app = Fastify();
    await app.register(rz.verifier.fastifyPlugin);
    expect(() => app.get('/x', { config: { rzAuth: { maxAge: -1 } } }, async () => ({}))).toThrow(/maxAge/);
    await app.close();
  });
});

/** The same step-up route on each framework, answered by the adapter with the challenge. */
function adapterChecks(base: () => string) {
  const post = async (token: string) => {
    const res = await fetch(`${base()}/publish`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, challenge: res.headers.get('www-authenticate'), cache: res.headers.get('cache-control'), body: (await res.json()) as { code?: string; user?: string } };
  };

  it('answers an old or password-only login with 401 and the exact RFC 9470 challenge, no-store', async () => {
    for (const token of [rz.passwordOnly, rz.withTotp]) {
      expect(await post(token)).toEqual({ status: 401, challenge: challenge(300), cache: 'no-store', body: { code: 'insufficient_user_authentication', message: expect.any(String) } });
    }
  });

  it('answers an API token 403 insufficient_scope', async () => {
    const res = await post(rz.apiToken);
    expect([res.status, res.challenge, res.body.code]).toEqual([403, 'Bearer realm="rz", error="insufficient_scope"', 'insufficient_scope']);
  });

  it('serves a fresh second-factor login', async () => {
    const res = await post(await rz.freshTotp());
    expect([res.status, res.body.user]).toEqual([200, rz.user.id]);
  });
}

const portOf = (server: Server) => (server.address() as AddressInfo).port;

describe('fastifyPlugin with rzAuth: { mfa: true, maxAge: 300 }', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = Fastify();
    await app.register(rz.verifier.fastifyPlugin);
    app.post('/publish', { config: { rzAuth: { mfa: true, maxAge: 300 } } }, async (request) => ({ user: (request as unknown as { caller: Caller }).caller.userId }));
    await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => app.close());
  adapterChecks(() => `http://127.0.0.1:${portOf(app.server)}`);
});

describe('expressMiddleware({ mfa: true, maxAge: 300 })', () => {
  let server: Server;
  beforeAll(async () => {
    const middleware = rz.verifier.expressMiddleware({ mfa: true, maxAge: 300 });
    server = createServer((req: IncomingMessage & { caller?: Caller }, res: ServerResponse) => {
      middleware(req, res, (error) => (error ? res.writeHead(500).end() : res.end(JSON.stringify({ user: req.caller?.userId }))));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  adapterChecks(() => `http://127.0.0.1:${portOf(server)}`);
});
