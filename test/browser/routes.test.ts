import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { developersPage, PAGE_CSP, type PageSettings } from '../../src/web/routes.js';

/** The route module on its own (no browser needed): what it serves from a given build folder. */
const apps: FastifyInstance[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function appServing(files: Record<string, string> | null, settings: PageSettings = { mail: false, mfaRequired: false, passkeys: false }): Promise<FastifyInstance> {
  const dir = mkdtempSync(join(tmpdir(), 'rz-web-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files ?? {})) writeFileSync(join(dir, name), text);
  const app = Fastify({ logger: false });
  apps.push(app);
  developersPage(app, settings, dir);
  await app.ready();
  return app;
}

describe('Developers page routes', () => {
  it('without a build, answers 503 with a page saying how to build it', async () => {
    const app = await appServing(null);
    const res = await app.inject({ method: 'GET', url: '/developers' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toContain('npm run build');
  });

  it('serves the built files with their content types, the page CSP on the HTML, and ETag revalidation', async () => {
    const app = await appServing({ 'index.html': '<!doctype html><title>x</title>', 'main.js': 'export {};', 'style.css': 'body{}', 'notes.txt': 'not served' });
    const page = await app.inject({ method: 'GET', url: '/developers' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toBe(PAGE_CSP);
    expect(page.headers['cache-control']).toBe('no-cache');
    const etag = String(page.headers.etag);
    expect((await app.inject({ method: 'GET', url: '/developers', headers: { 'if-none-match': etag } })).statusCode).toBe(304);
    expect((await app.inject({ method: 'HEAD', url: '/developers' })).statusCode).toBe(200);

    const script = await app.inject({ method: 'GET', url: '/developers/main.js' });
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect((await app.inject({ method: 'GET', url: '/developers/style.css' })).headers['content-type']).toBe('text/css; charset=utf-8');
    // Only known web file types are served, and index.html only at the page's own address.
    expect((await app.inject({ method: 'GET', url: '/developers/notes.txt' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: '/developers/index.html' })).statusCode).toBe(404);
  });

  it('tells the page whether mail is on in its own HTML, with an ETag of what is sent', async () => {
    const html = '<!doctype html><meta name="rz-auth-mail" content="off"><title>x</title>';
    const off = await (await appServing({ 'index.html': html })).inject({ method: 'GET', url: '/developers' });
    const on = await (await appServing({ 'index.html': html }, { mail: true, mfaRequired: false, passkeys: false })).inject({ method: 'GET', url: '/developers' });
    expect(off.body).toBe(html);
    expect(on.body).toBe('<!doctype html><meta name="rz-auth-mail" content="on"><title>x</title>');
    expect(on.headers.etag).not.toBe(off.headers.etag);
  });

  it('tells the page whether MFA_REQUIRED is on, apart from mail', async () => {
    const html = '<!doctype html><meta name="rz-auth-mail" content="off"><meta name="rz-auth-mfa-required" content="off"><title>x</title>';
    const required = await (await appServing({ 'index.html': html }, { mail: false, mfaRequired: true, passkeys: false })).inject({ method: 'GET', url: '/developers' });
    expect(required.body).toBe('<!doctype html><meta name="rz-auth-mail" content="off"><meta name="rz-auth-mfa-required" content="on"><title>x</title>');
  });

  it('tells the page whether passkeys are on (WebAuthn has a relying party), apart from the rest', async () => {
    const html = '<!doctype html><meta name="rz-auth-mfa-required" content="off"><meta name="rz-auth-passkeys" content="off"><title>x</title>';
    const on = await (await appServing({ 'index.html': html }, { mail: false, mfaRequired: false, passkeys: true })).inject({ method: 'GET', url: '/developers' });
    expect(on.body).toBe('<!doctype html><meta name="rz-auth-mfa-required" content="off"><meta name="rz-auth-passkeys" content="on"><title>x</title>');
  });

  it('serves the same page at /device (contract §13.7) with the page CSP, its settings and its ETag; 503 there too without a build', async () => {
    const html = '<!doctype html><meta name="rz-auth-mail" content="off"><title>x</title>';
    const app = await appServing({ 'index.html': html, 'main.js': 'export {};' }, { mail: true, mfaRequired: false, passkeys: false });
    const developers = await app.inject({ method: 'GET', url: '/developers' });
    const device = await app.inject({ method: 'GET', url: '/device?user_code=WDJB-MJHT' });
    expect(device.statusCode).toBe(200);
    expect(device.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(device.headers['content-security-policy']).toBe(PAGE_CSP);
    expect(device.headers['cross-origin-opener-policy']).toBe('same-origin');
    expect(device.headers['cache-control']).toBe('no-cache');
    expect(device.body).toBe(developers.body);
    expect(device.headers.etag).toBe(developers.headers.etag);
    expect((await app.inject({ method: 'GET', url: '/device', headers: { 'if-none-match': String(device.headers.etag) } })).statusCode).toBe(304);
    // Only the HTML: the scripts stay under /developers/.
    expect((await app.inject({ method: 'GET', url: '/device/main.js' })).statusCode).toBe(404);
    const unbuilt = await (await appServing(null)).inject({ method: 'GET', url: '/device' });
    expect(unbuilt.statusCode).toBe(503);
    expect(unbuilt.body).toContain('npm run build');
  });

  it('redirects / and /developers/ to /developers', async () => {
    const app = await appServing({ 'index.html': '<!doctype html>' });
    const root = await app.inject({ method: 'GET', url: '/' });
    expect(root.statusCode).toBe(302);
    expect(root.headers.location).toBe('/developers');
    const slash = await app.inject({ method: 'GET', url: '/developers/' });
    expect(slash.statusCode).toBe(301);
    expect(slash.headers.location).toBe('/developers');
  });
});
