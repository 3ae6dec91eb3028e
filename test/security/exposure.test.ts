import { randomUUID } from 'node:crypto';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBLEMS } from '../../src/errors.js';
import { generateToken, tokenDigest } from '../../src/lib/token-format.js';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { bearer, createApiToken, flip, json, login, registerApp, signup, type TestUser } from '../helpers/api.js';

/**
 * Security family 9, exposure: credentials appear in the one response that creates them and
 * nowhere else (other responses, error bodies, logs, the OpenAPI document); credential responses
 * are not cached; no response can be sniffed or names the framework.
 */

const TOKEN_VALUE = /\brza?_[0-9A-Za-z]{49}(?![0-9A-Za-z])/;
const SIGNED_JWT = /eyJ[\w-]+\.eyJ[\w-]+\.[\w-]{20,}/;
const NO_CREDENTIAL = 'must not contain a credential (a token, a signing secret or a JWT)';
/** A public address given literally: registering an endpoint there needs no DNS. */
const PUBLIC_HOOK = 'https://93.184.215.14/hooks';

describe('exposure of credentials', () => {
  let t: TestApp;
  let user: TestUser;
  let appId: string;
  /** Everything secret, by name: values, digests, the password, its hash, private key material. */
  const secrets = new Map<string, string>();
  const tokens: Record<'jwt' | 'api' | 'app', string> = { jwt: '', api: '', app: '' };

  beforeAll(async () => {
    t = await startTestApp();
    const password = `exposure passphrase ${randomUUID()}`;
    user = await signup(t, { password });
    const loginJwt = await login(t, user.email, password);
    const api = await createApiToken(t, user.jwt, { scopes: ['apps:read', 'apps:write', 'tokens:read'] });
    const app = await registerApp(t, user.jwt);
    const issued = (await json(t, 'POST', `/api/apps/${app.id}/tokens`, undefined, user.jwt)).json() as { token: string };
    Object.assign(tokens, { jwt: user.jwt, api: api.token, app: app.token });
    appId = app.id;
    const values = { 'signup JWT': user.jwt, 'login JWT': loginJwt, 'API token': api.token, 'app token': app.token, 'second app token': issued.token };
    for (const [name, value] of Object.entries(values)) {
      secrets.set(name, value);
      if (!name.endsWith('JWT')) secrets.set(`${name} digest`, tokenDigest(value));
    }
    secrets.set('password', password);
    const { db } = t.services.database;
    const row = await db.selectFrom('users').select('password_hash').where('id', '=', user.id).executeTakeFirstOrThrow();
    secrets.set('password hash', row.password_hash);
    secrets.set('password hash (last segment)', row.password_hash.split('$').at(-1) ?? '');
    for (const key of await db.selectFrom('signing_keys').select(['kid', 'private_jwk']).execute()) {
      secrets.set(`private key ${key.kid}`, (JSON.parse(key.private_jwk) as { d: string }).d);
    }
  });
  afterAll(() => t.close());

  function expectNoSecret(text: string, where: string): void {
    for (const [name, value] of secrets) expect(text.includes(value), `${where} contains the ${name}`).toBe(false);
  }

  const jsonTo = (token: string) => ({ ...bearer(token), 'content-type': 'application/json' });
  const get = (url: string, token?: string) => t.inject({ method: 'GET', url, headers: token ? bearer(token) : {} });

  it('no list, read, key or docs response carries a credential', async () => {
    const reads: Array<[string, keyof typeof tokens | null]> = [
      ['/api/me', 'jwt'],
      ['/api/me', 'api'],
      ['/api/me', 'app'],
      ['/api/tokens', 'jwt'],
      ['/api/tokens', 'api'],
      ['/api/apps', 'jwt'],
      ['/api/apps', 'api'],
      [`/api/apps/${appId}`, 'jwt'],
      [`/api/apps/${appId}`, 'api'],
      [`/api/apps/${appId}`, 'app'],
      ['/.well-known/jwks.json', null],
      ['/openapi.json', null],
      ['/docs/json', null],
      ['/docs', null],
      ['/problems/invalid-token', null],
    ];
    for (const [url, kind] of reads) {
      const res = await get(url, kind === null ? undefined : tokens[kind]);
      expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
      expectNoSecret(res.body, `GET ${url} (${kind ?? 'anonymous'})`);
    }
  });

  it('an app token, which may ship inside a published app, does not reveal its owner\'s email', async () => {
    const res = await get('/api/me', tokens.app);
    expect(res.json()).not.toHaveProperty('email');
    expect(res.body).not.toContain(user.email);
  });

  it('lists show the hint, never the value', async () => {
    const listed = ((await get('/api/tokens', tokens.jwt)).json() as { tokens: Array<Record<string, unknown>> }).tokens;
    expect(listed.map((token) => token.hint)).toContain(`rz_${tokens.api.slice(-4)}`);
    for (const token of listed) expect(Object.keys(token).sort()).toEqual(['children_revoked_before', 'children_seen', 'created_at', 'derivable', 'expires_at', 'hint', 'id', 'last_used_at', 'name', 'revoked_at', 'scopes', 'state']);
  });

  it('error bodies echo no credential, even one the client sent', async () => {
    const failures: InjectOptions[] = [
      { method: 'DELETE', url: `/api/tokens/${tokens.api}`, headers: bearer(tokens.jwt) },
      { method: 'GET', url: `/api/apps/${tokens.app}`, headers: bearer(tokens.jwt) },
      { method: 'GET', url: `/api/nope?access_token=${tokens.api}` },
      { method: 'PUT', url: '/api/tokens', headers: bearer(tokens.jwt) },
      { method: 'POST', url: '/api/auth/logout', headers: bearer(tokens.api) },
      { method: 'GET', url: '/api/me', headers: { authorization: `Bearer ${tokens.api} ${tokens.jwt}` } },
      { method: 'GET', url: '/api/me', headers: { authorization: `Basic ${tokens.api}` } },
      { method: 'POST', url: '/api/tokens', headers: jsonTo(tokens.jwt), payload: `{"name":"${tokens.api}"` },
      { method: 'POST', url: '/api/tokens', headers: { ...bearer(tokens.jwt), 'content-type': 'text/plain' }, payload: tokens.api },
      ...[{ name: 'x', token: tokens.api }, { name: 'x', [tokens.api]: 1 }, { name: 'x', expires_at: tokens.jwt }].map(
        (body): InjectOptions => ({ method: 'POST', url: '/api/tokens', headers: bearer(tokens.jwt), payload: body }),
      ),
      { method: 'POST', url: '/api/tokens', headers: jsonTo(tokens.jwt), payload: `{"${tokens.app}":1,"${tokens.app}":2}` },
      { method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: `${secrets.get('password') ?? ''}!` } },
      { method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: secrets.get('password'), extra: 1 } },
      { method: 'POST', url: '/api/auth/signup', payload: { email: user.email, username: 'someone_else', password: secrets.get('password') } },
      { method: 'POST', url: '/api/auth/signup', payload: { email: 'x@example.com', username: 'x', password: secrets.get('password'), token: tokens.jwt } },
    ];
    for (const request of failures) {
      const res = await t.inject(request);
      expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, res.body).toBeLessThan(500);
      expectNoSecret(res.body, `${request.method ?? ''} ${String(request.url).slice(0, 30)} (${res.statusCode})`);
    }
  });

  it('logs hold no token, digest or password, whether sent in a header, a URL or a body', async () => {
    const from = t.logs.length;
    const requests: InjectOptions[] = [
      ...Object.values(tokens).map((token): InjectOptions => ({ method: 'GET', url: '/api/me', headers: bearer(token) })),
      { method: 'GET', url: `/api/me?access_token=${tokens.api}` },
      { method: 'GET', url: `/api/apps?token=${tokens.jwt}&app=${tokens.app}`, headers: bearer(tokens.jwt) },
      { method: 'DELETE', url: `/api/tokens/${tokens.api}`, headers: bearer(tokens.jwt) },
      { method: 'GET', url: '/api/me', headers: { authorization: `Bearer ${flip(tokens.api, -1)}`, cookie: `session=${tokens.jwt}` } },
      { method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: secrets.get('password') } },
      { method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: 'a wrong password, logged nowhere' } },
    ];
    const ids: string[] = [];
    for (const request of requests) ids.push(String((await t.inject(request)).headers['x-request-id']));
    const lines = (await t.settledLogs()).slice(from).join('');
    expectNoSecret(lines, 'the logs');
    expect(lines).not.toContain('a wrong password');
    expect(lines).not.toMatch(/Bearer /);
    expect(lines).not.toMatch(TOKEN_VALUE);
    for (const id of ids) expect(lines).toContain(`"request_id":"${id}"`);
    expect(lines).toContain('/api/me?access_token=[REDACTED]');
  });

  it('a password sent in the query string was logged as it came (it has no token shape): its value is now redacted', async () => {
    const password = secrets.get('password') ?? '';
    const queries = [
      `?email=${encodeURIComponent(user.email)}&password=${encodeURIComponent(password)}`,
      `?P%61ssword=${encodeURIComponent(password)}`,
      `?current_password=${encodeURIComponent(password)}&new_password=${encodeURIComponent(`${password}2`)}`,
      `?a=1;pw=${encodeURIComponent(password)}`,
      `?password%3D${encodeURIComponent(password)}`,
      `?user=ada%26password%3D${encodeURIComponent(password)}`,
    ];
    const from = t.logs.length;
    for (const query of queries) await t.inject({ method: 'POST', url: `/api/auth/login${query}`, payload: {} });
    const lines = (await t.settledLogs()).slice(from).join('');
    expect(lines.split('\n').filter(Boolean).length).toBeGreaterThanOrEqual(queries.length);
    expectNoSecret(lines, 'the logs');
    expect(lines).not.toContain(encodeURIComponent(password));
    expect(lines).toContain(`/api/auth/login?email=${encodeURIComponent(user.email)}&password=[REDACTED]`);
  });

  it('a token behind a percent-encoded delimiter, or percent-encoded itself, in the URL never reaches the log', async () => {
    const encodeAll = (s: string) => [...s].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
    const hidden: string[] = [
      `?x=Bearer%20${tokens.api}`,
      `?x=%22${tokens.api}`,
      `?a=1%2C${tokens.api}`,
      `?a=1%2c${tokens.app}`,
      `?x=%09${tokens.jwt}`,
      `?x=Bearer+${tokens.app}`,
      `?x=%72z_${tokens.api.slice(3)}`,
      `?x=rz%5F${tokens.api.slice(3)}`,
      `?x=${tokens.jwt.replaceAll('.', '%2E')}`,
      `?x=${encodeAll(tokens.api)}`,
      `?x=${encodeAll(encodeAll(tokens.app))}`,
      `?x=%2572%257a%255f${tokens.api.slice(3)}`,
    ];
    const from = t.logs.length;
    for (const query of hidden) await get(`/api/me${query}`);
    const lines = (await t.settledLogs()).slice(from).join('');
    expect(lines.split('\n').filter(Boolean)).toHaveLength(hidden.length);
    expectNoSecret(lines, 'the logs');
    for (const query of hidden) expect(lines, query).not.toContain(query.slice(3));
    for (const token of Object.values(tokens)) expect(lines).not.toContain(token.slice(-12));
  });

  it('a token the 2,048-character cut of a logged URL fell inside was logged in part: now none of it', async () => {
    const from = t.logs.length;
    const cases: Array<[string, number]> = [];
    // The token's first `kept` characters before the cut: too few for any pattern to recognise.
    for (const [token, kept] of [[tokens.api, 10], [tokens.app, 5], [tokens.api.slice(3), 39], [tokens.app.slice(4), 20]] as const) {
      const head = `/api/me?pad=${'a-'.repeat(1_100)}`.slice(0, 2_048 - kept - 3);
      const url = `${head}&t=${token}&n=1`;
      expect(url.indexOf(token) + kept).toBe(2_048);
      const res = await get(url);
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('unauthorized');
      cases.push([token, kept]);
    }
    const lines = (await t.settledLogs()).slice(from).filter((l) => l.includes('"url_length"'));
    expect(lines).toHaveLength(cases.length);
    for (const [i, [token, kept]] of cases.entries()) {
      const { url } = JSON.parse(lines[i] ?? '{}') as { url: string };
      expect(url.endsWith('&t=…'), url.slice(-20)).toBe(true);
      expect(lines.join(''), `${kept} characters of a token`).not.toContain(token.slice(0, kept));
    }
  });

  it('a credential pasted as a name or description was stored and sent on (lists, audit log, webhooks): now 400 naming the field', async () => {
    const pasted = (value: string) => [value, `my ${value} key`, `name=${value}`];
    const whsec = `whsec_${'A'.repeat(32)}`;
    for (const value of [...pasted(tokens.api), ...pasted(tokens.app), ...pasted(tokens.jwt), whsec]) {
      const made = await json(t, 'POST', '/api/tokens', { name: value }, tokens.jwt);
      expect(made.statusCode, value).toBe(400);
      expect(made.json()).toMatchObject({ code: 'validation_failed', errors: [{ field: 'name' }] });
      expectNoSecret(made.body, 'the 400');
      const described = await json(t, 'POST', '/api/apps', { name: 'app', description: value }, tokens.jwt);
      expect(described.json()).toMatchObject({ code: 'validation_failed', errors: [{ field: 'description' }] });
    }
    const own = await createApiToken(t, tokens.jwt, { name: 'to rename' });
    const renamed = await json(t, 'PATCH', `/api/tokens/${own.id}`, { name: tokens.api }, tokens.jwt);
    expect(renamed.json()).toMatchObject({ code: 'validation_failed', errors: [{ field: 'name' }] });
    // Names that merely look a little like one are names; so are emoji sequences, which hold
    // invisible joiners and variation selectors.
    for (const name of ['rz_deploy', 'rz_ci_key_for_staging_environment', 'heyJoe', 'eyJ', `${tokens.api.slice(0, 30)}`, '👩‍💻 laptop ❤️']) {
      expect((await json(t, 'POST', '/api/tokens', { name }, tokens.jwt)).statusCode, name).toBe(201);
    }
  });

  // Regression: the check read the raw text, so a zero-width space, a soft hyphen or a BOM inside
  // the credential hid it from the pattern but not from anyone who copied the name.
  it('a credential split by an invisible character was stored as a name or description: now 400 naming the field', async () => {
    const split = (value: string, mark: string) => `${value.slice(0, 20)}${mark}${value.slice(20)}`;
    const whsec = `whsec_${'A'.repeat(32)}`;
    const values = ['\u200b', '\u00ad', '\ufeff', '\u2060', '\u034f'].flatMap((mark) => [tokens.api, tokens.app, tokens.jwt, whsec].map((value) => split(value, mark)));
    for (const value of values) {
      const made = await json(t, 'POST', '/api/tokens', { name: value }, tokens.jwt);
      expect(made.json(), JSON.stringify(value)).toMatchObject({ code: 'validation_failed', errors: [{ field: 'name' }] });
      const described = await json(t, 'POST', '/api/apps', { name: 'app', description: `see ${value}` }, tokens.jwt);
      expect(described.json(), JSON.stringify(value)).toMatchObject({ code: 'validation_failed', errors: [{ field: 'description' }] });
    }
    const own = await createApiToken(t, tokens.jwt, { name: 'to rename' });
    const renamed = await json(t, 'PATCH', `/api/tokens/${own.id}`, { name: split(tokens.api, '\u200b') }, tokens.jwt);
    expect(renamed.json()).toMatchObject({ code: 'validation_failed', errors: [{ field: 'name' }] });
  });

  /** Every place a user names or describes something, with the field a refusal names. */
  const namingPlaces = (value: string, renamable: string): Array<[string, string, () => Promise<LightMyRequestResponse>]> => [
    ['token name', 'name', () => json(t, 'POST', '/api/tokens', { name: value }, tokens.jwt)],
    ['token rename', 'name', () => json(t, 'PATCH', `/api/tokens/${renamable}`, { name: value }, tokens.jwt)],
    ['app name', 'name', () => json(t, 'POST', '/api/apps', { name: value }, tokens.jwt)],
    ['app description', 'description', () => json(t, 'POST', '/api/apps', { name: 'app', description: `see ${value}` }, tokens.jwt)],
    ['webhook description', 'description', () => json(t, 'POST', '/api/webhooks', { url: PUBLIC_HOOK, event_types: ['token.created'], description: value }, tokens.jwt)],
  ];
  async function expectRefusedEverywhere(values: string[]): Promise<void> {
    const renamable = (await createApiToken(t, tokens.jwt, { name: 'to rename' })).id;
    for (const value of values) {
      for (const [where, field, send] of namingPlaces(value, renamable)) {
        const res = await send();
        expect(res.statusCode, `${where}: ${JSON.stringify(value)}`).toBe(400);
        expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ field, message: NO_CREDENTIAL }] });
        expect(res.body).not.toContain(value);
      }
    }
  }
  const bodyOf = (token: string) => token.slice(token.indexOf('_') + 1);
  const service = generateToken('service');

  // Regression: the pattern wanted the prefix, yet the 49 characters after it are the whole secret.
  it('a token body without its prefix was accepted as a token name and shown in lists and the audit log: now 400 naming the field', async () => {
    await expectRefusedEverywhere([tokens.api, tokens.app, service].flatMap((token) => [bodyOf(token), `key ${bodyOf(token)} here`]));
  });

  // Regression: the prefix was matched in lower case only and the token had to end at a word end.
  it('a token with its prefix in another case, a letter or digit glued after it, or `rz-` was accepted as a name: now 400 naming the field', async () => {
    const body = bodyOf(tokens.api);
    await expectRefusedEverywhere([`RZ_${body}`, `Rza_${bodyOf(tokens.app)}`, `${tokens.api}x`, `${tokens.app}7`, `rz-${body}`, `key=rz${body}`]);
  });

  // Regression: the check read the code points as stored; compatibility normalisation (and any
  // reader's eye) makes them the token.
  it('a token written in full-width characters was accepted as a name although it reads as the token: now 400 naming the field', async () => {
    const fullWidth = (text: string) => [...text].map((c) => String.fromCodePoint((c.codePointAt(0) ?? 0) + 0xfee0)).join('');
    await expectRefusedEverywhere([fullWidth(tokens.api), `${tokens.app.slice(0, 20)}${fullWidth(tokens.app.slice(20))}`, fullWidth(service)]);
  });

  // Regression: `whsec_` was matched in lower case only.
  it('a webhook signing secret with its prefix in another case was accepted as a name: now 400 naming the field', async () => {
    const secret = 'q8Vn3+Lw0/ZkR2pXy5TbM9cJ1hGd7sFa';
    await expectRefusedEverywhere([`WHSEC_${secret}`, `Whsec_${secret}`, `ｗｈｓｅｃ＿${secret}`]);
  });

  it('names that merely resemble a token are still names (positive controls)', async () => {
    const notToken = 'Q7mZ2xKp9LwB4vT1nRc8YhE3sJd6GfU0aXo5iNk2PqW9rMbCe';
    expect(notToken).toHaveLength(49);
    const names = ['deploy key', 'rz_tools', 'RZ_TOOLS ci', notToken, `key ${notToken}`, flip(bodyOf(tokens.api), 48), bodyOf(tokens.api).slice(0, 48), 'whsec_short', 'ⅧⅧ full-width ｄｅｐｌｏｙ'];
    for (const name of names) {
      const made = await json(t, 'POST', '/api/tokens', { name }, tokens.jwt);
      expect(made.statusCode, `${name}: ${made.body}`).toBe(201);
      const described = await json(t, 'POST', '/api/apps', { name: 'app', description: `see ${name}` }, tokens.jwt);
      expect(described.statusCode, `${name}: ${described.body}`).toBe(201);
    }
  });

  describe('headers', () => {
    const tag = () => randomUUID().slice(0, 8);
    const credentialResponses: Array<[string, () => Promise<LightMyRequestResponse>]> = [
      ['signup', () => json(t, 'POST', '/api/auth/signup', { email: `h-${tag()}@example.com`, username: `h_${tag()}`, password: 'another long passphrase' })],
      ['login', () => json(t, 'POST', '/api/auth/login', { email: user.email, password: secrets.get('password') })],
      ['API token creation', () => json(t, 'POST', '/api/tokens', { name: 'cached?' }, tokens.jwt)],
      ['app registration', () => json(t, 'POST', '/api/apps', { name: 'cached?' }, tokens.jwt)],
      ['app token creation', () => json(t, 'POST', `/api/apps/${appId}/tokens`, undefined, tokens.jwt)],
    ];
    it.each(credentialResponses)('%s: 2xx with Cache-Control: no-store', async (_what, send) => {
      const res = await send();
      expect(res.statusCode, res.body).toBeLessThan(300);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.json()).toHaveProperty('token');
    });

    const anyResponse: Array<[string, () => InjectOptions | Promise<InjectOptions>]> = [
      ['200 /api/me', () => ({ method: 'GET', url: '/api/me', headers: bearer(tokens.jwt) })],
      ['204 DELETE', async () => ({ method: 'DELETE', url: `/api/apps/${(await registerApp(t, tokens.jwt)).id}`, headers: bearer(tokens.jwt) })],
      ['400', () => ({ method: 'POST', url: '/api/tokens', headers: bearer(tokens.jwt), payload: { nope: 1 } })],
      ['401', () => ({ method: 'GET', url: '/api/me' })],
      ['403', () => ({ method: 'POST', url: '/api/tokens', headers: bearer(tokens.app), payload: { name: 'x' } })],
      ['404 unknown API path', () => ({ method: 'GET', url: '/api/nope' })],
      ['404 unknown path', () => ({ method: 'GET', url: '/nope.html' })],
      ['405', () => ({ method: 'PATCH', url: '/api/me' })],
      ['413', () => ({ method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'application/json' }, payload: ' '.repeat(17_000) })],
      ['415', () => ({ method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'text/html' }, payload: '<b>x</b>' })],
      ['JWKS', () => ({ method: 'GET', url: '/.well-known/jwks.json' })],
      ['OpenAPI', () => ({ method: 'GET', url: '/openapi.json' })],
      ['docs page', () => ({ method: 'GET', url: '/docs' })],
      ['problem page', () => ({ method: 'GET', url: '/problems/not-found' })],
      ['HEAD', () => ({ method: 'HEAD', url: '/api/me' })],
      ['OPTIONS', () => ({ method: 'OPTIONS', url: '/api/tokens' })],
    ];
    it.each([
      ['PATCH', '/api/me'],
      ['PUT', '/api/tokens'],
      ['TRACE', '/api/me'],
      ['TRACE', '/api/tokens'],
      ['QUERY', '/api/me'],
      ['PROPFIND', '/api/tokens'],
      ['MKCOL', '/api/tokens/0b6f3c1e-2a4d-4c8e-9f10-5a7b3d2e1c90'],
    ] as const)('%s %s: 405 method_not_allowed with Allow (TRACE, QUERY and methods Fastify does not route by default were a 404 or a 400)', async (method, url) => {
      // light-my-request's method type leaves TRACE out; Fastify and Node route it.
      const res = await t.inject({ method: method as 'PATCH', url });
      expect(res.statusCode).toBe(405);
      expect(res.json()).toMatchObject({ code: 'method_not_allowed' });
      expect(res.headers.allow).toMatch(/^GET, HEAD/);
      expect(String(res.headers.allow)).not.toContain(method);
    });

    // Regression: a fixed path beside an {id} route (`/api/tokens/leaked`) answered every method
    // it does not serve with 405, even those the {id} route serves, where a malformed id is 404.
    it.each([
      ['GET', '/api/tokens/leaked'],
      ['PATCH', '/api/tokens/leaked'],
      ['DELETE', '/api/tokens/leaked'],
      ['DELETE', '/api/webhooks/event-types'],
    ] as const)('%s %s: a fixed path read as a malformed id of the {id} route with that method was a 405: now 404', async (method, url) => {
      const body = method === 'PATCH' ? { payload: { name: 'renamed' } } : {};
      const res = await t.inject({ method, url, headers: bearer(tokens.jwt), ...body });
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json()).toMatchObject({ code: 'not_found' });
      expect(res.headers.allow).toBeUndefined();
    });

    it('a fixed path still answers 405 to a method no route serves at its address', async () => {
      const res = await t.inject({ method: 'PATCH', url: '/api/webhooks/event-types', headers: bearer(tokens.jwt) });
      expect(res.statusCode).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD');
    });

    it('the docs page asked browsers to upgrade its own requests to HTTPS (blank over plain HTTP on a LAN address) and allowed framing by itself: neither now', async () => {
      for (const url of ['/docs', '/docs/static/index.html']) {
        const res = await t.inject({ method: 'GET', url });
        const csp = String(res.headers['content-security-policy']);
        expect(csp, url).toContain("default-src 'self'");
        expect(csp, url).not.toContain('upgrade-insecure-requests');
        expect(csp, url).toContain("frame-ancestors 'none'");
      }
    });

    it.each(anyResponse)('%s: nosniff, no X-Powered-By', async (_what, request) => {
      const res = await t.inject(await request());
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-powered-by']).toBeUndefined();
      expect(res.headers.server).toBeUndefined();
    });
  });

  it('the OpenAPI examples hold no real-looking token or signed JWT', async () => {
    const spec = (await get('/openapi.json')).body;
    const examples: unknown[] = [];
    const collect = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(collect);
      else if (node !== null && typeof node === 'object') {
        for (const [key, value] of Object.entries(node)) {
          if (key === 'example' || key === 'examples') examples.push(value);
          collect(value);
        }
      }
    };
    collect(JSON.parse(spec));
    expect(examples.length).toBeGreaterThan(10);
    expect(JSON.stringify(examples)).toContain('rz_');
    expect(spec).not.toMatch(TOKEN_VALUE);
    expect(spec).not.toMatch(SIGNED_JWT);
    expect(spec).not.toMatch(/\$argon2/);
  });
});

describe('a 500', () => {
  it('is the catalogue problem with no internal message, and its log line holds no token', async () => {
    const t = await startTestApp();
    try {
      const { jwt } = await signup(t);
      // A store that has gone away is the cleanest real failure to provoke.
      await t.services.database.close();
      const res = await t.inject({ method: 'GET', url: `/api/tokens?access_token=${jwt}`, headers: bearer(jwt) });
      expect(res.statusCode).toBeGreaterThanOrEqual(500);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      const body = res.json() as { code: keyof typeof PROBLEMS };
      expect(['internal', 'unavailable']).toContain(body.code);
      const { title, detail, status } = PROBLEMS[body.code];
      expect(body).toEqual({ type: `/problems/${body.code}`, title, status, code: body.code, detail, request_id: res.headers['x-request-id'] });
      expect(res.body).not.toMatch(/destroyed|driver|kysely|sqlite|Error|\bat /);
      const lines = (await t.settledLogs()).join('');
      expect(lines).toMatch(/"level":50/);
      expect(lines).not.toContain(jwt);
      expect(lines).not.toContain(jwt.split('.')[2]);
    } finally {
      await t.close();
    }
  });
});
