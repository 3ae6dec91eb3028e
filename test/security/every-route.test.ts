import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { bearer, createApiToken, json, registerApp, signup } from '../helpers/api.js';
import { createService } from '../helpers/platform.js';

/**
 * Security family 1 over the whole interface, walked from the OpenAPI document so a route added
 * later is covered too: every operation, sent hostile bodies, each field of its body replaced by
 * values of every wrong type, bodies under wrong or odd content types, hostile query strings and
 * path parameters, answers a 4xx (or its success), never a 5xx and never anything internal. Each
 * operation runs as a user of its own, on their own token, app and webhook, so an operation that
 * revokes or deletes leaves the next one untouched.
 */

interface Operation {
  readonly requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> };
  readonly security?: ReadonlyArray<Record<string, unknown>>;
}

/** What must never reach a client: parser and driver messages, stack frames, source paths, SQL. */
const LEAKS = /SyntaxError|Unexpected (token|end)|JSON at position|\bat \S+ \(|\.[jt]s:\d+|node_modules|FST_ERR|TypeError|Sqlite|syntax error|\bselect\b.*\bfrom\b/i;

const BODIES = ['{}', '', 'null', '[]', '"x"', '1', '{', '{"a":', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}', '['.repeat(5000), '{"a":1,"a":2}'];
const VALUES: unknown[] = [null, 0, -1, 1e308, 1.5, '', 'x', 'x'.repeat(10_000), '\u0000', '\ud800', [], [null], [1], {}, { a: 1 }, true];
const QUERIES = ['?limit=x', '?type=%00&cursor=%00&limit=%00', '?limit=99999999999999999999', `?cursor=${'x'.repeat(5000)}`, `?type=${'x'.repeat(300)}`, '?a=%ZZ', `?${'a=1&'.repeat(2000)}`];
/** Content types a body may come with, wrong or odd ones included. */
const CONTENT_TYPES = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', 'application/JSON', 'application/json, text/plain', '', 'x'.repeat(2000)];
/**
 * Malformed or smuggled credentials, a valid user token inside most: each is a 401 where a
 * credential is required (two headers, a 400, are authorization-header.test.ts's).
 */
const AUTHORIZATIONS = (jwt: string): string[] => [
  '',
  'Bearer',
  'Bearer ',
  `Bearer\t${jwt}`,
  `Basic ${jwt}`,
  `Bearer ${jwt} x`,
  `Bearer ${jwt},`,
  `Bearer ${jwt.slice(0, -1)}`,
  `Bearer ${' '.repeat(20_000)}x`,
  `Bearer ${'a'.repeat(20_000)}`,
  `Bearer ${jwt}, Bearer ${jwt}`,
  `Bearer x,Bearer ${jwt}`,
];
/** Hostile path parameters, as sent (percent-encoded). */
const PATH_IDS = ['%00', 'a%00b', '%ZZ', '%2e%2e', 'x'.repeat(5000), '%27%20or%201%3D1', '0B6F3C1E-2A4D-4C8E-9F10-5A7B3D2E1C90', '%F0%9F%98%80', '%ED%A0%80', '-1', '1e999'];
/** A stream that never ends: only its refusals are requested here (service-routes.test.ts has the rest). */
const STREAMS = new Set(['GET /api/events']);

/** Each body to send: the hostile ones, then one field at a time, alone and beside the others. */
function bodiesFor(op: Operation): string[] {
  const props = Object.keys(op.requestBody?.content?.['application/json']?.schema?.properties ?? {});
  const out = [...BODIES];
  for (const field of props) {
    for (const value of VALUES) {
      out.push(JSON.stringify({ [field]: value }));
      out.push(JSON.stringify({ ...Object.fromEntries(props.map((p) => [p, 'x'])), [field]: value }));
    }
  }
  return out;
}

describe('every route, hostile input', () => {
  let t: TestApp;
  let operations: Array<[string, string, Operation]>;
  let serviceToken: string;

  beforeAll(async () => {
    t = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    serviceToken = (await createService(t)).token;
    const doc = (await t.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, Operation>> };
    operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]): [string, string, Operation] => [method.toUpperCase(), path, op]));
  });
  afterAll(() => t.close());

  it('walks every operation of the document', () => {
    // A guard against a document that lost its paths: the walk below would then prove nothing.
    expect(operations.length).toBeGreaterThan(30);
  });

  it('never answers 5xx or anything internal, whatever the body, a field, the content type, the query or the path', async () => {
    const failures: string[] = [];
    for (const [method, path, op] of operations) {
      const user = await signup(t);
      const token = await createApiToken(t, user.jwt);
      const app = await registerApp(t, user.jwt);
      const hook = await json(t, 'POST', '/api/webhooks', { url: 'http://127.0.0.1:9/hook', event_types: ['token.created'] }, user.jwt);
      expect(hook.statusCode, hook.body).toBe(201);
      const ids: Record<string, string> = { apps: app.id, webhooks: (hook.json() as { id: string }).id, tokens: token.id };
      const url = path.replace(/\/(\w+)\/\{\w+\}/g, (_, collection: string) => `/${collection}/${ids[collection] ?? '00000000-0000-4000-8000-000000000000'}`);
      const broad = await createApiToken(t, user.jwt, { scopes: ['apps:read', 'apps:write', 'tokens:read'] });
      // Each credential the operation lets in takes its own path through it; a stream is only refused.
      const credentials = STREAMS.has(`${method} ${path}`)
        ? [user.jwt]
        : (op.security ?? []).flatMap((s) => ({ userToken: [user.jwt], apiToken: [broad.token], appToken: [app.token], serviceToken: [serviceToken] })[Object.keys(s)[0] ?? ''] ?? []);
      for (const credential of credentials.length === 0 ? [user.jwt] : credentials) {
        const send = async (target: string, payload: string | undefined, contentType = 'application/json') => {
          const res = await t.inject({
            method: method as 'GET',
            url: target,
            headers: { ...bearer(credential), ...(payload === undefined ? {} : { 'content-type': contentType }) },
            ...(payload === undefined ? {} : { payload }),
          });
          if (res.statusCode >= 500 || LEAKS.test(res.body)) failures.push(`${method} ${target.slice(0, 80)} ${String(payload).slice(0, 60)} → ${res.statusCode} ${res.body.slice(0, 120)}`);
        };
        for (const payload of op.requestBody ? bodiesFor(op) : [undefined]) await send(url, payload);
        for (const query of QUERIES) await send(url + query, op.requestBody ? '{}' : undefined);
        for (const contentType of CONTENT_TYPES) await send(url, 'a=1&b=%ZZ&c[]=x', contentType);
        if (path.includes('{')) {
          for (const id of PATH_IDS) await send(path.replace(/\{\w+\}/g, id), op.requestBody ? '{}' : undefined);
        }
      }
      for (const authorization of AUTHORIZATIONS(user.jwt)) {
        const res = await t.inject({ method: method as 'GET', url, headers: { authorization, ...(op.requestBody ? { 'content-type': 'application/json' } : {}) }, ...(op.requestBody ? { payload: '{}' } : {}) });
        if (res.statusCode >= 500 || LEAKS.test(res.body)) failures.push(`${method} ${url.slice(0, 80)} authorization ${authorization.slice(0, 60)} → ${res.statusCode} ${res.body.slice(0, 120)}`);
        if (op.security !== undefined && op.security.length > 0 && res.statusCode !== 401 && !STREAMS.has(`${method} ${path}`)) {
          failures.push(`${method} ${url.slice(0, 80)} authorization ${authorization.slice(0, 60)} → ${res.statusCode}, not 401`);
        }
      }
    }
    expect(failures).toEqual([]);
  }, 180_000);
});
