import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERBS } from '../../src/api/operation.js';
import { registerOpenApi } from '../../src/http/docs.js';
import { bearer, signup } from '../helpers/api.js';
import { createService } from '../helpers/platform.js';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { type Document, type Operation, operationsOf } from './document.js';

/**
 * What every operation of the live document says, present and future: the conventions that make
 * a generated client usable and an API gateway's import complete. operation() (src/api) writes
 * all of it; these tests hold any route, however it was declared, to the same rules.
 */

const PROBLEM = { $ref: '#/components/schemas/Problem' };
const VERB_FIRST = new RegExp(`^(${VERBS.join('|')})[A-Z][A-Za-z0-9]*$`);

describe('every operation of the document', () => {
  let t: TestApp;
  let doc: Document;
  let ops: Array<[string, string, Operation]>;
  beforeAll(async () => {
    t = await startTestApp();
    doc = (await t.inject({ method: 'GET', url: '/openapi.json' })).json() as Document;
    ops = operationsOf(doc);
  });
  afterAll(() => t.close());

  const each = (check: (op: Operation, name: string) => void) => () => {
    for (const [method, path, op] of ops) check(op, `${method} ${path}`);
  };
  const statuses = (op: Operation) => Object.keys(op.responses);
  const isProtected = (op: Operation) => (op.security ?? []).length > 0;

  it('has a unique, verb-first operationId, a summary, a description and known tags', () => {
    const tags = (doc.tags as Array<{ name: string }>).map((tag) => tag.name);
    const ids = ops.map(([, , op]) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    each((op, name) => {
      expect(op.operationId, name).toMatch(VERB_FIRST);
      expect(op.summary, name).toBeTruthy();
      expect(op.description, name).toBeTruthy();
      expect(op.tags?.length, name).toBeGreaterThan(0);
      for (const tag of op.tags ?? []) expect(tags, name).toContain(tag);
    })();
  });

  it('declares its security: the schemes it accepts, or none when public', each((op, name) => {
    expect(Array.isArray(op.security), `${name} declares no security`).toBe(true);
    const schemes = Object.keys((doc.components as { securitySchemes: object }).securitySchemes);
    for (const requirement of op.security ?? []) for (const scheme of Object.keys(requirement)) expect(schemes, name).toContain(scheme);
  }));

  it('documents a success, 500 and a default problem', each((op, name) => {
    expect(statuses(op).some((s) => s.startsWith('2')), name).toBe(true);
    expect(statuses(op), name).toEqual(expect.arrayContaining(['500', 'default']));
  }));

  // The OAuth endpoints answer their 400, 401 and 429 as RFC 6749 §5.2 error objects (contract §13.5).
  it('answers every problem as application/problem+json with the Problem schema (the OAuth errors as RFC 6749 objects)', each((op, name) => {
    for (const [status, response] of Object.entries(op.responses)) {
      if (status.startsWith('2')) continue;
      if (name.includes(' /oauth/') && ['400', '401', '429'].includes(status)) {
        expect(Object.keys(response.content ?? {}), `${name} ${status}`).toEqual(['application/json']);
        continue;
      }
      expect(Object.keys(response.content ?? {}), `${name} ${status}`).toEqual(['application/problem+json']);
      expect(response.content?.['application/problem+json']?.schema, `${name} ${status}`).toEqual(PROBLEM);
    }
  }));

  it('documents what the guard answers on a protected operation, with the RFC 6750 challenge', each((op, name) => {
    if (!isProtected(op)) return;
    expect(statuses(op), name).toEqual(expect.arrayContaining(['400', '401', '403', '429']));
    for (const status of ['401', '403']) expect(Object.keys(op.responses[status]?.headers ?? {}), `${name} ${status}`).toContain('WWW-Authenticate');
  }));

  // Regression: logOut, DELETE /api/tokens/{id} and the other operations without a body answer a
  // body sent anyway with 400, 413 or 415, and did not document any of them.
  it('documents 400, 413 and 415 on every API operation (a body can be sent with any method, a GET too), and 404 where it takes an id', each((op, name) => {
    if (!name.startsWith('get /healthz') && !name.startsWith('get /readyz')) expect(statuses(op), name).toEqual(expect.arrayContaining(['400', '413', '415']));
    // An id is a path parameter; a header the operation reads (Last-Event-ID) is none.
    if (op.parameters?.some((p) => (p as { in?: string }).in === 'path')) expect(statuses(op), name).toContain('404');
  }));

  it('documents the RateLimit fields on every 2xx and 4xx of a limited operation, and Retry-After on its 429', each((op, name) => {
    if (!statuses(op).includes('429')) return;
    for (const status of statuses(op).filter((s) => /^[24]/.test(s))) {
      expect(Object.keys(op.responses[status]?.headers ?? {}), `${name} ${status}`).toEqual(expect.arrayContaining(['RateLimit-Policy', 'RateLimit']));
    }
    expect(Object.keys(op.responses['429']?.headers ?? {}), name).toContain('Retry-After');
  }));

  it('is enforced as documented: a protected operation answers 401 without a token, a public one never does', async () => {
    for (const [method, path, op] of ops) {
      const url = path.replaceAll(/\{[^}]+\}/g, randomUUID());
      const res = await t.inject({ method: method.toUpperCase() as 'GET', url, ...(op.requestBody ? { payload: {} } : {}) });
      if (isProtected(op)) expect(res.statusCode, `${method} ${path}`).toBe(401);
      else expect(res.statusCode, `${method} ${path}`).not.toBe(401);
    }
  });

  it('is enforced as documented: an operation without a body answers a form sent to it with 415, a GET too (it was answered as if none was sent)', async () => {
    const { jwt } = await signup(t);
    const service = await createService(t);
    for (const [method, path, op] of ops) {
      if (op.requestBody) continue;
      const url = path.replaceAll(/\{[^}]+\}/g, randomUUID());
      // The service routes take a service credential, every other protected one a user token.
      const token = op.security?.some((s) => 'serviceToken' in s) ? service.token : jwt;
      const res = await t.inject({ method: method.toUpperCase() as 'GET', url, headers: { ...bearer(token), 'content-type': 'application/x-www-form-urlencoded' }, payload: 'a=1' });
      if (statuses(op).includes('415')) expect(res.statusCode, `${method} ${path}`).toBe(415);
      else expect(res.statusCode, `${method} ${path}`).not.toBe(415);
    }
  });
});

describe('a route declared without operation()', () => {
  it('stops the app from starting, unless it is hidden from the document', async () => {
    const app = Fastify();
    await registerOpenApi(app, '0.0.0');
    app.get('/hidden', { schema: { hide: true } }, async () => 'ok');
    expect(() => app.get('/api/handwritten', { schema: { summary: 'Documented by hand' } }, async () => 'ok')).toThrow(/operation\(\)/);
    await app.close();
  });
});
