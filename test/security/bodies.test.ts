import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { bearer, expectProblem, json, signup, type TestUser } from '../helpers/api.js';

/**
 * Security family 1, hostile bodies: every JSON endpoint answers a clear 4xx problem, never a 5xx,
 * never a stack or a parser message, and the server keeps serving (checked after every test).
 */

const ENDPOINTS = ['/api/auth/signup', '/api/auth/login', '/api/tokens', '/api/apps'] as const;
type Endpoint = (typeof ENDPOINTS)[number];

/** A valid body for each endpoint: a test changes one thing about it. */
const VALID: Record<Endpoint, Record<string, unknown>> = {
  '/api/auth/signup': { email: 'bodies@example.com', username: 'bodies_user', password: 'a long enough passphrase' },
  '/api/auth/login': { email: 'bodies@example.com', password: 'a long enough passphrase' },
  '/api/tokens': { name: 'bodies', scopes: ['apps:read'], expires_at: '2099-01-01T00:00:00.000Z' },
  '/api/apps': { name: 'bodies', description: 'an app' },
};

/** What must never reach a client: V8's JSON messages, stack frames, source paths, Fastify codes. */
const LEAKS = /SyntaxError|Unexpected (token|end|non-whitespace)|JSON at position|string literal|\bat \S+ \(|\.[jt]s:\d+|node_modules|FST_ERR|TypeError/;

/** Every endpoint crossed with every case, as it.each rows. */
const onEach = <T extends unknown[]>(cases: readonly T[]): Array<[Endpoint, ...T]> =>
  ENDPOINTS.flatMap((url) => cases.map((c): [Endpoint, ...T] => [url, ...c]));

const withByte = (bytes: number[]) => Buffer.concat([Buffer.from('{"name":"'), Buffer.from(bytes), Buffer.from('"}')]);

describe('hostile request bodies', () => {
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    user = await signup(t);
  });
  afterAll(() => t.close());
  afterEach(async () => {
    // The server keeps serving after whatever the test sent.
    expect((await json(t, 'GET', '/api/me', undefined, user.jwt)).statusCode).toBe(200);
  });

  function post(url: string, payload: string | Buffer, contentType: string | null = 'application/json', token: string | null = user.jwt) {
    return t.inject({
      method: 'POST',
      url,
      payload,
      headers: { ...(contentType === null ? {} : { 'content-type': contentType }), ...(token === null ? {} : bearer(token)) },
    });
  }

  /** A 4xx problem with the given code and nothing internal in it. */
  function expectRefused(res: LightMyRequestResponse, status: number, code: string): Record<string, unknown> {
    const body = expectProblem(res, status, code);
    expect(res.body).not.toMatch(LEAKS);
    return body;
  }

  /** 400 validation_failed whose `errors` names `field` (or an item of it, e.g. `scopes.0`). */
  function expectFieldError(res: LightMyRequestResponse, field: string): void {
    const body = expectRefused(res, 400, 'validation_failed');
    const fields = (body.errors as Array<{ field: string }>).map((e) => e.field);
    expect(fields.some((f) => f === field || f.startsWith(`${field}.`)), JSON.stringify(body.errors)).toBe(true);
  }

  const MALFORMED: Array<[string, string | Buffer]> = [
    ['truncated object', '{"name":"x"'],
    ['truncated inside a key', '{"na'],
    ['truncated after a colon', '{"name":'],
    ['empty body', ''],
    ['whitespace only', ' \n\t '],
    ['trailing garbage', '{"name":"x"} trailing'],
    ['two documents', '{}{}'],
    ['single quotes', "{'name':'x'}"],
    ['unquoted key', '{name:"x"}'],
    ['trailing comma', '{"name":"x",}'],
    ['comment', '{/* c */"name":"x"}'],
    ['NaN', '{"name":NaN}'],
    ['raw control character in a string', '{"name":"a\u0001b"}'],
    ['raw newline in a string', '{"name":"a\nb"}'],
    ['unknown escape', '{"name":"\\x41"}'],
    ['33 levels of nesting', `{"a":${'['.repeat(32)}${']'.repeat(32)}}`],
    ['5000 levels of nesting', `${'['.repeat(5000)}${']'.repeat(5000)}`],
    ['duplicate key', '{"name":"a","name":"b"}'],
    ['duplicate key spelled with a \\u escape', '{"name":"a","n\\u0061me":"b"}'],
    ['duplicate key in a nested object', '{"x":{"k":1,"\\u006b":2}}'],
    ['lone surrogate escape in a value', '{"name":"a\\ud800b"}'],
    ['lone surrogate escape in a key', '{"\\udc00":1}'],
    ['__proto__ key', '{"name":"x","__proto__":{"admin":true}}'],
    ['__proto__ key spelled with a \\u escape', '{"name":"x","__pro\\u0074o__":{"admin":true}}'],
    ['constructor.prototype keys', '{"name":"x","constructor":{"prototype":{"admin":true}}}'],
    ['prototype key', '{"name":"x","prototype":{"admin":true}}'],
    ['__proto__ nested in an object', '{"name":"x","a":{"b":{"__proto__":{"admin":true}}}}'],
    ['constructor inside an array', '{"name":"x","scopes":[{"constructor":{"admin":true}}]}'],
    ['invalid UTF-8: lone continuation byte', withByte([0x80])],
    ['invalid UTF-8: truncated sequence', withByte([0xc3])],
    ['invalid UTF-8: bad continuation', withByte([0xc3, 0x28])],
    ['invalid UTF-8: overlong "/"', withByte([0xc0, 0xaf])],
    ['invalid UTF-8: encoded surrogate', withByte([0xed, 0xa0, 0x80])],
    ['invalid UTF-8: above U+10FFFF', withByte([0xf4, 0x90, 0x80, 0x80])],
    ['invalid UTF-8: 0xFF', withByte([0xff])],
    ['invalid UTF-8: Latin-1 é', withByte([0xe9])],
    ['UTF-16 body', Buffer.from('\ufeff{"name":"x"}', 'utf16le')],
  ];

  it.each(onEach(MALFORMED))('%s, %s: 400 naming the body', async (url, _what, payload) => {
    const body = expectRefused(await post(url, payload), 400, 'validation_failed');
    expect(body.errors).toEqual([{ field: 'body', message: expect.any(String) }]);
  });

  it('prototype keys pollute nothing in the process', () => {
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('admin');
  });

  it('32 levels of nesting pass the parser (the limit is exactly 32)', async () => {
    expectFieldError(await post('/api/tokens', `{"name":"x","a":${'['.repeat(31)}${']'.repeat(31)}}`), 'a');
  });

  it('valid non-ASCII text and paired surrogate escapes are accepted unchanged', async () => {
    const res = await post('/api/apps', '{"name":"Ünïcødé \\ud83d\\ude80 🚀","description":"日本語"}');
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ name: 'Ünïcødé 🚀 🚀', description: '日本語' });
  });

  const NON_OBJECTS = [['[]'], ['[{}]'], ['"a string"'], ['42'], ['null'], ['true'], ['false']];
  it.each(onEach(NON_OBJECTS))('%s, non-object JSON %s: 400 naming the body', async (url, payload) => {
    const body = expectRefused(await post(url, payload), 400, 'validation_failed');
    expect(body.errors).toEqual([{ field: 'body', message: expect.any(String) }]);
  });

  describe('content types', () => {
    const body = (url: Endpoint) => JSON.stringify(VALID[url]);
    const REFUSED: Array<[string, string | null, string | null]> = [
      ['no content-type', null, null],
      ['text/plain (CORS-simple)', 'text/plain', null],
      ['text/plain;charset=UTF-8', 'text/plain;charset=UTF-8', null],
      ['a form', 'application/x-www-form-urlencoded', 'name=x&email=a%40b.c'],
      ['multipart', 'multipart/form-data; boundary=XX', '--XX\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n--XX--\r\n'],
      ['JSON in Latin-1', 'application/json; charset=latin1', null],
      ['JSON in ISO-8859-1', 'application/json; charset=iso-8859-1', null],
      ['JSON in UTF-16', 'application/json; charset=utf-16', null],
      ['text/json', 'text/json', null],
      ['application/ld+json', 'application/ld+json', null],
      ['application/jsonx', 'application/jsonx', null],
      ['XML', 'application/xml', '<name>x</name>'],
      ['two charsets, one not UTF-8', 'application/json; charset=utf-8; charset=latin1', null],
      ['a quoted charset that is not UTF-8', 'application/json; charset="utf-8x"', null],
      ['a malformed parameter', 'application/json; =utf-8', null],
      ['junk after the type', 'application/json junk', null],
      ['an unterminated quoted value', 'application/json; a="b', null],
    ];

    it.each(onEach(REFUSED))('%s, %s: 415', async (url, _what, type, payload) => {
      expectRefused(await post(url, payload ?? body(url), type), 415, 'unsupported_media_type');
    });

    it('a CORS-simple text/plain signup creates no account', async () => {
      const email = 'simple-post@example.com';
      const payload = JSON.stringify({ email, username: 'simple_post', password: 'a long enough passphrase' });
      expectRefused(await post('/api/auth/signup', payload, 'text/plain', null), 415, 'unsupported_media_type');
      expectRefused(await json(t, 'POST', '/api/auth/login', { email, password: 'a long enough passphrase' }), 401, 'invalid_credentials');
    });

    it.each(['gzip', 'GZIP', 'deflate', 'br', 'identity, gzip', 'x-unknown', ''])(
      'a body under Content-Encoding "%s" was read as plain JSON and created a token: now 415, and nothing created',
      async (coding) => {
        const name = `coded ${coding}`;
        const res = await t.inject({
          method: 'POST',
          url: '/api/tokens',
          payload: JSON.stringify({ name }),
          headers: { 'content-type': 'application/json', 'content-encoding': coding, ...bearer(user.jwt) },
        });
        const body = expectRefused(res, 415, 'unsupported_media_type');
        expect(body.detail).toMatch(/Content-Encoding/);
        const list = await json(t, 'GET', '/api/tokens', undefined, user.jwt);
        expect(list.json<{ tokens: Array<{ name: string }> }>().tokens.map((token) => token.name)).not.toContain(name);
      },
    );

    it('Content-Encoding: identity is a plain body', async () => {
      const res = await t.inject({
        method: 'POST',
        url: '/api/tokens',
        payload: '{"name":"identity"}',
        headers: { 'content-type': 'application/json', 'content-encoding': 'Identity', ...bearer(user.jwt) },
      });
      expect(res.statusCode, res.body).toBe(201);
    });

    const ACCEPTED = [
      'application/json',
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'APPLICATION/JSON',
      'Application/Json; Charset="utf-8"',
      // Parameters other than charset were 415, though the contract allows parameters.
      'application/json;charset=UTF-8;x=y',
      'application/json; version=1',
      'application/json; profile="https://example.com/p;q"',
      'application/json;',
      'application/json ; charset=utf-8 ',
    ];
    it.each(ACCEPTED)('%s is accepted', async (type) => {
      const res = await post('/api/tokens', '{"name":"typed"}', type);
      expect(res.statusCode, res.body).toBe(201);
    });
  });

  describe('size', () => {
    const LIMIT = 16 * 1024;
    /** A valid body padded with JSON whitespace to exactly `bytes`. */
    const padded = (url: Endpoint, bytes: number) => {
      const text = JSON.stringify(VALID[url]);
      return text + ' '.repeat(bytes - Buffer.byteLength(text));
    };

    it.each(ENDPOINTS)('%s: 16 KiB + 1 byte is 413', async (url) => {
      expectRefused(await post(url, padded(url, LIMIT + 1)), 413, 'payload_too_large');
    });

    it.each(ENDPOINTS)('%s: 1 MiB is 413', async (url) => {
      expectRefused(await post(url, padded(url, 1024 * 1024)), 413, 'payload_too_large');
    });

    it('exactly 16 KiB is accepted', async () => {
      const res = await post('/api/tokens', padded('/api/tokens', LIMIT));
      expect(res.statusCode, res.body).toBe(201);
    });

    // Regression: Ajv reports every bad item, so 16 KiB of `[0,0,...]` was answered with 16,000
    // errors, close to a megabyte: each request cost sixty times its size in the other direction.
    it('a body of thousands of bad items is answered with a capped errors list, not a megabyte', async () => {
      const payload = JSON.stringify({ name: 'x', scopes: Array<number>(8000).fill(0) });
      const res = await post('/api/tokens', payload);
      const body = expectRefused(res, 400, 'validation_failed');
      expect((body.errors as unknown[]).length).toBe(20);
      expect(Buffer.byteLength(res.body)).toBeLessThan(4096);
    });

    it('a field name or detail that echoes the client\'s text is clipped', async () => {
      // Separated: a run of 40 letters or digits is redacted as a token body would be.
      const key = 'kk-'.repeat(Math.floor((LIMIT / 2 - 100) / 3));
      const unknown = expectRefused(await post('/api/tokens', `{"name":"x","${key}":1}`), 400, 'validation_failed');
      const duplicate = expectRefused(await post('/api/tokens', `{"name":"x","${key}":1,"${key}":2}`), 400, 'validation_failed');
      for (const body of [unknown, duplicate]) {
        const [error] = body.errors as Array<{ field: string; message: string }>;
        expect([...(error?.field ?? '')].length).toBeLessThanOrEqual(200);
        expect([...(error?.message ?? '')].length).toBeLessThanOrEqual(200);
        expect([...String(body.detail)].length).toBeLessThanOrEqual(500);
      }
      expect(JSON.stringify(unknown.errors)).toMatch(/"(kk-)+k?k?…"/);
    });

    it('an anonymous caller cannot make the server read a body on a protected route', async () => {
      expectRefused(await post('/api/tokens', padded('/api/tokens', LIMIT + 1), 'application/json', null), 401, 'unauthorized');
      expectRefused(await post('/api/apps', '{"broken', 'application/json', null), 401, 'unauthorized');
    });
  });

  describe('control characters in strings', () => {
    const NAMES = ['a\u0000b', 'a\r\nb', 'a\nb', 'a\rb', 'a\tb', '\u001b[31mred', 'a\u007fb', 'a\u0008b'];
    const rows = (['/api/tokens', '/api/apps'] as const).flatMap((url) => NAMES.map((name): [string, string] => [url, name]));

    it.each(rows)('%s: name %j is 400', async (url, name) => {
      expectFieldError(await json(t, 'POST', url, { name }, user.jwt), 'name');
    });

    // Regression: C1 controls (U+0080-U+009F, e.g. CSI U+009B, a terminal escape) and bidi
    // overrides used to pass into names.
    it.each(['a\u0085b', '\u009b31mred', 'safe\u202eexe.txt'])('name %j (C1 control or bidi override) is 400', async (name) => {
      expectFieldError(await json(t, 'POST', '/api/apps', { name }, user.jwt), 'name');
    });

    it.each(['line one\u2028line two', 'para\u2029graph'])('a name with a Unicode line separator (%j) was accepted: 400', async (name) => {
      expectFieldError(await json(t, 'POST', '/api/tokens', { name }, user.jwt), 'name');
      expectFieldError(await json(t, 'POST', '/api/apps', { name }, user.jwt), 'name');
    });

    it.each(['line one\nline two', 'col\tcol', 'windows\r\nline'])('description %j keeps its line breaks and tabs', async (description) => {
      const res = await json(t, 'POST', '/api/apps', { name: 'multi-line', description }, user.jwt);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toMatchObject({ description });
    });

    it.each(['a\u0000b', '\u001b[2J', 'a\u007f', 'a\u000bb'])('description %j is 400', async (description) => {
      expectFieldError(await json(t, 'POST', '/api/apps', { name: 'x', description }, user.jwt), 'description');
    });

    it.each([
      ['email', { email: 'a\u0000b@example.com' }],
      ['email', { email: 'a@example.com\r\nBcc: x@example.com' }],
      ['username', { username: 'ab\ncd' }],
      ['username', { username: 'abc\u0000' }],
      ['password', { password: 'a long enough pass\u0000phrase' }],
    ])('signup %s with a control character is 400', async (field, override) => {
      expectFieldError(await json(t, 'POST', '/api/auth/signup', { ...VALID['/api/auth/signup'], ...override }), field);
    });

    it('login with CR/LF in the email is the usual invalid_credentials', async () => {
      const res = await json(t, 'POST', '/api/auth/login', { email: `${user.email}\r\nX: y`, password: user.password });
      expectRefused(res, 401, 'invalid_credentials');
    });

    it.each([
      ['a NUL alone', '\u0000'],
      ['a NUL inside an address', 'bod\u0000ies@example.com'],
      ['no @ at all', 'not an email'],
    ])('login with %s as the email was a 500 on PostgreSQL (NUL in text): now the usual invalid_credentials', async (_name, email) => {
      expectRefused(await json(t, 'POST', '/api/auth/login', { email, password: user.password }), 401, 'invalid_credentials');
    });
  });

  describe('fields', () => {
    const WRONG_TYPES: unknown[] = [1, 1.5, true, false, null, [], ['x'], {}, { value: 'x' }];
    const WRONG_VALUES: Record<string, unknown[]> = {
      scopes: ['apps:read', 1, true, null, {}, [1], [null], [['apps:read']], ['admin'], ['APPS:READ'], ['apps:read '], ['apps:read', 'apps:read']],
      expires_at: [1, true, null, [], {}, 'tomorrow', '2099-13-01T00:00:00Z', '1700000000', '2020-01-01T00:00:00.000Z'],
      name: [...WRONG_TYPES, '', '   ', 'x'.repeat(101)],
      description: [...WRONG_TYPES, 'x'.repeat(1001)],
    };
    const rows = ENDPOINTS.flatMap((url) =>
      Object.keys(VALID[url]).flatMap((field) =>
        (url.startsWith('/api/auth/') ? WRONG_TYPES : (WRONG_VALUES[field] ?? WRONG_TYPES)).map((value): [Endpoint, string, unknown] => [url, field, value]),
      ),
    );

    it.each(rows)('%s: %s = %j is 400 naming the field', async (url, field, value) => {
      expectFieldError(await json(t, 'POST', url, { ...VALID[url], [field]: value }, user.jwt), field);
    });

    const required: Array<[Endpoint, string]> = [
      ['/api/auth/signup', 'email'],
      ['/api/auth/signup', 'username'],
      ['/api/auth/signup', 'password'],
      ['/api/auth/login', 'email'],
      ['/api/auth/login', 'password'],
      ['/api/tokens', 'name'],
      ['/api/apps', 'name'],
    ];
    it.each(required)('%s without %s is 400 naming it', async (url, field) => {
      const body = Object.fromEntries(Object.entries(VALID[url]).filter(([name]) => name !== field));
      expectFieldError(await json(t, 'POST', url, body, user.jwt), field);
    });

    const EXTRA: Array<[Endpoint, string, unknown]> = [
      ['/api/tokens', 'scope', ['apps:write']],
      ['/api/tokens', 'Scopes', ['apps:write']],
      ['/api/tokens', 'user_id', '0b6f3c1e-2a4d-4c8e-9f10-5a7b3d2e1c90'],
      ['/api/tokens', 'id', '0b6f3c1e-2a4d-4c8e-9f10-5a7b3d2e1c90'],
      ['/api/tokens', 'token', 'rz_chosen'],
      ['/api/tokens', 'expiresAt', '2099-01-01T00:00:00.000Z'],
      ['/api/apps', 'user_id', '0b6f3c1e-2a4d-4c8e-9f10-5a7b3d2e1c90'],
      ['/api/apps', 'id', '0b6f3c1e-2a4d-4c8e-9f10-5a7b3d2e1c90'],
      ['/api/auth/signup', 'id', '0b6f3c1e-2a4d-4c8e-9f10-5a7b3d2e1c90'],
      ['/api/auth/signup', 'is_admin', true],
      ['/api/auth/signup', 'password_hash', '$argon2id$v=19$m=19456,t=2,p=1$x$y'],
      ['/api/auth/login', 'user_id', '0b6f3c1e-2a4d-4c8e-9f10-5a7b3d2e1c90'],
      ['/api/auth/login', 'remember_me', true],
    ];
    it.each(EXTRA)('%s with an unknown field %s is 400 naming it', async (url, field, value) => {
      const body = expectRefused(await json(t, 'POST', url, { ...VALID[url], [field]: value }, user.jwt), 400, 'validation_failed');
      expect(body.errors).toContainEqual({ field, message: 'is not a known field' });
    });

    // Regression: errors arrays carried Ajv's own messages, a library's text that also describes
    // the schema's internals ("must match a schema in anyOf"). Every message is now ours.
    it.each([
      ['a wrong type', { name: 5 }, [{ field: 'name', message: 'must be a string' }]],
      ['too long', { name: 'x'.repeat(1001) }, [{ field: 'name', message: 'must be at most 1000 characters' }]],
      ['not an array', { name: 'x', scopes: 'apps:read' }, [{ field: 'scopes', message: 'must be an array' }]],
      ['an unknown scope', { name: 'x', scopes: ['admin'] }, [{ field: 'scopes.0', message: 'is not one of the allowed values' }]],
      ['a scope twice', { name: 'x', scopes: ['apps:read', 'apps:read'] }, [{ field: 'scopes', message: 'must not list an item twice' }]],
      ['not a date-time', { name: 'x', expires_at: 'tomorrow' }, [{ field: 'expires_at', message: 'must be an ISO 8601 date-time' }]],
    ])('POST /api/tokens with %s: errors in our own words', async (_name, payload, errors) => {
      const body = expectRefused(await json(t, 'POST', '/api/tokens', payload, user.jwt), 400, 'validation_failed');
      expect(body.errors).toEqual(errors);
    });

    it('/api/apps with a scope app tokens may not carry (apps:write) is 400 naming scopes, and registers nothing', async () => {
      const count = async () => ((await json(t, 'GET', '/api/apps', undefined, user.jwt)).json() as { apps: unknown[] }).apps.length;
      const before = await count();
      expectFieldError(await json(t, 'POST', '/api/apps', { ...VALID['/api/apps'], scopes: ['apps:write'] }, user.jwt), 'scopes');
      expect(await count()).toBe(before);
    });

    it('a `scope` typo creates no token at all, not a weaker one', async () => {
      const count = async () => ((await json(t, 'GET', '/api/tokens', undefined, user.jwt)).json() as { tokens: unknown[] }).tokens.length;
      const before = await count();
      expectFieldError(await json(t, 'POST', '/api/tokens', { name: 'typo', scope: ['apps:read'] }, user.jwt), 'scope');
      expect(await count()).toBe(before);
    });
  });

  describe('operations that take no body', () => {
    it.each([
      ['{"user_id":"00000000-0000-4000-8000-000000000000"}', ['user_id']],
      ['{"user_id":"x","token_id":"y"}', ['user_id', 'token_id']],
      ['null', ['body']],
      ['[]', ['body']],
      ['"x"', ['body']],
    ])('a body %s was ignored (204) and the client believed it heard: now 400 naming it, and nothing happens', async (payload, fields) => {
      const created = (await json(t, 'POST', '/api/tokens', { name: 'bodyless' }, user.jwt)).json() as { id: string; token: string };
      for (const [method, url] of [
        ['DELETE', `/api/tokens/${created.id}`],
        ['DELETE', '/api/auth/sessions'],
        ['POST', '/api/auth/logout'],
      ] as const) {
        const res = await t.inject({ method, url, payload, headers: { 'content-type': 'application/json', ...bearer(user.jwt) } });
        const body = expectRefused(res, 400, 'validation_failed');
        expect((body.errors as Array<{ field: string }>).map((e) => e.field)).toEqual(fields);
      }
      expect((await json(t, 'GET', '/api/me', undefined, created.token)).statusCode).toBe(200);
    });

    it('no body, and an empty object, are accepted', async () => {
      const created = (await json(t, 'POST', '/api/tokens', { name: 'bodyless' }, user.jwt)).json() as { id: string };
      const other = (await json(t, 'POST', '/api/tokens', { name: 'bodyless' }, user.jwt)).json() as { id: string };
      expect((await json(t, 'DELETE', `/api/tokens/${created.id}`, undefined, user.jwt)).statusCode).toBe(204);
      expect((await json(t, 'DELETE', `/api/tokens/${other.id}`, {}, user.jwt)).statusCode).toBe(204);
    });

    it.each(['application/json', 'text/plain', 'application/x-www-form-urlencoded'])(
      'an empty body sent with Content-Type: %s (as generated clients do) was 400 "body is empty" or 415: now accepted like no body',
      async (type) => {
        const created = (await json(t, 'POST', '/api/tokens', { name: 'bodyless' }, user.jwt)).json() as { id: string; token: string };
        const res = await t.inject({ method: 'DELETE', url: `/api/tokens/${created.id}`, payload: '', headers: { 'content-type': type, 'content-length': '0', ...bearer(user.jwt) } });
        expect(res.statusCode, res.body).toBe(204);
        expect((await json(t, 'GET', '/api/me', undefined, created.token)).statusCode).toBe(401);
        // A body that is not empty is still read by its type: 415 for one that is not JSON.
        const other = (await json(t, 'POST', '/api/tokens', { name: 'bodyless' }, user.jwt)).json() as { id: string };
        const sent = await t.inject({ method: 'DELETE', url: `/api/tokens/${other.id}`, payload: 'x', headers: { 'content-type': type, ...bearer(user.jwt) } });
        expect(sent.statusCode).toBe(type === 'application/json' ? 400 : 415);
      },
    );

    // Regression: Fastify never reads the body of a GET or a HEAD, so one was answered as if there
    // were none (GET /api/me with `ab` as text/plain and a valid token: 200).
    const JSON_TYPE = { 'content-type': 'application/json' };
    const GET_BODIES: Array<[string, number, string, Record<string, string>, string | undefined]> = [
      ['text/plain', 415, 'unsupported_media_type', { 'content-type': 'text/plain' }, 'ab'],
      ['no Content-Type', 415, 'unsupported_media_type', {}, 'ab'],
      ['two Content-Types', 415, 'unsupported_media_type', { 'content-type': 'application/json, text/plain' }, '{}'],
      ['malformed JSON', 400, 'validation_failed', JSON_TYPE, '{'],
      ['{"user_id":1}', 400, 'validation_failed', JSON_TYPE, '{"user_id":1}'],
      ['{}', 400, 'validation_failed', JSON_TYPE, '{}'],
      ['Content-Length: 99999', 413, 'payload_too_large', { ...JSON_TYPE, 'content-length': '99999' }, undefined],
    ];
    it.each(GET_BODIES)('a GET with a body (%s) was answered as if it had none: now %i %s, on every spelling of the path and for HEAD', async (_what, status, code, headers, payload) => {
      for (const url of ['/api/me', '/%61pi/me', '/api/tokens', '/api/scopes']) {
        const res = await t.inject({ method: 'GET', url, headers: { ...headers, ...bearer(user.jwt) }, ...(payload === undefined ? {} : { payload }) });
        const body = expectRefused(res, status, code);
        expect(res.headers['x-content-type-options'], url).toBe('nosniff');
        if (code === 'validation_failed') expect(body.errors, url).toEqual([{ field: 'body', message: 'must be absent: this operation takes no body' }]);
        const head = await t.inject({ method: 'HEAD', url, headers: { ...headers, ...bearer(user.jwt) }, ...(payload === undefined ? {} : { payload }) });
        expect([url, head.statusCode, head.headers['content-type']]).toEqual([url, status, 'application/problem+json']);
      }
    });

    it('a GET with a body from an anonymous caller is refused by the guard first (401), and an empty body is no body', async () => {
      for (const [, , , headers, payload] of GET_BODIES) {
        const res = await t.inject({ method: 'GET', url: '/api/me', headers, ...(payload === undefined ? {} : { payload }) });
        expectRefused(res, 401, 'unauthorized');
      }
      for (const type of ['text/plain', 'application/json']) {
        const res = await t.inject({ method: 'GET', url: '/api/me', payload: '', headers: { 'content-type': type, 'content-length': '0', ...bearer(user.jwt) } });
        expect(res.statusCode, res.body).toBe(200);
      }
    });

    it('an anonymous body is never read: 401 first', async () => {
      const res = await t.inject({ method: 'DELETE', url: '/api/auth/sessions', payload: '{"user_id":"x"}', headers: { 'content-type': 'application/json' } });
      expect(res.statusCode).toBe(401);
    });
  });

  it('no request above made the server log an error', () => {
    expect(t.logs.filter((line) => /"level":(50|60)/.test(line))).toEqual([]);
  });
});
