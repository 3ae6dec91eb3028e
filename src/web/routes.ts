import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { packageFile } from '../lib/package-file.js';

/** Where `npm run build` writes the page (web/build.js), whether the service runs from src/ or dist/. */
export const PUBLIC_DIR = fileURLToPath(packageFile('dist/public/'));

/** The page's address; `/` redirects here. */
export const PAGE_PATH = '/developers';
/**
 * The same page at the address a CLI prints for approving its device request (contract §13.7,
 * RFC 8628 §3.2 `verification_uri`); the page shows its device screen there.
 */
export const DEVICE_PAGE_PATH = '/device';

/**
 * The page's own scripts and styles and nothing else: no inline script or style, no other origin,
 * no framing, no form posts (the forms are sent by script), and Trusted Types so that no string
 * can ever be parsed as HTML, even by a bug in the page.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

interface Asset {
  readonly body: Buffer;
  readonly type: string;
  readonly etag: string;
}

/** What the page must know about this server before its first request. */
export interface PageSettings {
  /** Mail is on (`SMTP_URL`): the page offers the §11 screens (forgot password, verification, email change). */
  readonly mail: boolean;
  /** `MFA_REQUIRED`: the page asks whether the account's grace period runs, for its banner (contract §12.7). */
  readonly mfaRequired: boolean;
  /** WebAuthn has a relying party (docs/mfa.md): the page offers passkeys, and their autofill on the login screen. */
  readonly passkeys: boolean;
}

/** The marker of each setting in web/static/index.html, `content="off"` there; the page reads them (web/src/api-email.ts, web/src/views/mfa-banner.ts, web/src/webauthn.ts). */
const MARKERS: Readonly<Record<keyof PageSettings, string>> = { mail: 'rz-auth-mail', mfaRequired: 'rz-auth-mfa-required', passkeys: 'rz-auth-passkeys' };
const marker = (name: string, on: boolean): string => `<meta name="${name}" content="${on ? 'on' : 'off'}">`;

const assetOf = (body: Buffer, type: string): Asset => ({ body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });

/** Every servable file under `dir`, keyed by its path relative to it; null when there is no build. */
function loadAssets(dir: string): Map<string, Asset> | null {
  if (!existsSync(join(dir, 'index.html'))) return null;
  const assets = new Map<string, Asset>();
  for (const entry of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const type = TYPES[extname(entry)];
    if (type === undefined) continue;
    assets.set(entry.split('\\').join('/'), assetOf(readFileSync(join(dir, entry)), type));
  }
  return assets;
}

/**
 * Files are small and change only with a deploy: every response may be cached but is revalidated
 * (ETag), so a new build shows at once and an unchanged one costs a 304.
 */
function sendAsset(request: FastifyRequest, reply: FastifyReply, asset: Asset, html: boolean): FastifyReply {
  reply.header('cache-control', 'no-cache');
  reply.header('etag', asset.etag);
  if (html) {
    reply.header('content-security-policy', PAGE_CSP);
    reply.header('cross-origin-opener-policy', 'same-origin');
  }
  if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
  return reply.type(asset.type).send(asset.body);
}

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Developers page not built</title></head>
<body><h1>The Developers page is not built</h1><p>Run <code>npm run build</code> and restart rz-auth.
The API works without it: see <a href="/docs">/docs</a>.</p></body></html>`;

/**
 * Whether mail is on (MFA required, passkeys on) is written into the page itself rather than asked by a
 * request: the login screen knows at once whether to offer "Forgot password?", without a probe that
 * every visit would send and that a 404 or a rate limit could answer for another reason.
 */
function withSettings(index: Asset, settings: PageSettings): Asset {
  const original = index.body.toString('utf8');
  let html = original;
  for (const [key, name] of Object.entries(MARKERS) as [keyof PageSettings, string][]) {
    if (settings[key]) html = html.replace(marker(name, false), marker(name, true));
  }
  return html === original ? index : assetOf(Buffer.from(html, 'utf8'), index.type);
}

/**
 * The Developers page: static files compiled from web/ by `npm run build`, read into memory once.
 * Without a build (tests from a fresh checkout) the API still starts and the page says how to build.
 */
export function developersPage(app: FastifyInstance, settings: PageSettings, dir = PUBLIC_DIR): void {
  const hide = { schema: { hide: true } };
  app.get('/', hide, (_request, reply) => reply.redirect(PAGE_PATH, 302));
  app.get(`${PAGE_PATH}/`, hide, (_request, reply) => reply.redirect(PAGE_PATH, 301));
  const assets = loadAssets(dir);
  if (assets === null) {
    app.log.warn({ dir }, 'Developers page not built: run npm run build');
    for (const path of [PAGE_PATH, DEVICE_PAGE_PATH]) app.get(path, hide, (_request, reply) => reply.code(503).type('text/html; charset=utf-8').send(NOT_BUILT));
    return;
  }
  for (const [path, file] of assets) {
    const html = path === 'index.html';
    const asset = html ? withSettings(file, settings) : file;
    // The HTML at both addresses, with the same CSP and headers; its scripts load from /developers/ at either.
    for (const url of html ? [PAGE_PATH, DEVICE_PAGE_PATH] : [`${PAGE_PATH}/${path}`]) app.get(url, hide, (request, reply) => sendAsset(request, reply, asset, html));
  }
}
