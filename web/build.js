// Builds the Developers page into dist/public: compiles web/src with web/tsconfig.json, copies
// web/static beside it, and lists every module in index.html as a modulepreload so the browser
// fetches the whole (small) module graph in one round trip instead of one per import level.
// Plain JavaScript so that it runs with no build of its own; `npm run build` calls it.
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const out = join(import.meta.dirname, '..', 'dist', 'public');
// Built beside the output and swapped in at the end, so a server starting during a build never
// finds the page half-written, and a module deleted from web/src does not linger.
const next = `${out}.next-${process.pid}`;
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

rmSync(next, { recursive: true, force: true });
try {
  execFileSync(process.execPath, [tsc, '-p', join(import.meta.dirname, 'tsconfig.json'), '--outDir', next], { stdio: 'inherit' });
} catch {
  rmSync(next, { recursive: true, force: true });
  process.exit(1); // tsc has printed the errors.
}
cpSync(join(import.meta.dirname, 'static'), next, { recursive: true });
// The page's one dependency, the QR encoder of the TOTP enrolment (web/src/qr.ts): its ES module,
// served from the page's own origin like the rest; web/src/vendor/uqr.d.ts gives it its types.
cpSync(fileURLToPath(import.meta.resolve('uqr')), join(next, 'vendor', 'uqr.js'));

const modules = readdirSync(next, { recursive: true })
  .map(String)
  .filter((file) => file.endsWith('.js') && file !== 'main.js')
  .sort();
const preload = modules.map((file) => `<link rel="modulepreload" href="/developers/${file.replaceAll('\\', '/')}">`).join('\n    ');
const indexFile = join(next, 'index.html');
const index = readFileSync(indexFile, 'utf8');
if (!index.includes('<!-- modulepreload -->')) throw new Error('web/static/index.html lacks the <!-- modulepreload --> marker');
// src/web/routes.ts turns it on when mail is configured; without it the page would never offer mail.
if (!index.includes('<meta name="rz-auth-mail" content="off">')) throw new Error('web/static/index.html lacks the rz-auth-mail meta marker');
// The same for MFA_REQUIRED: without it the page would never show the grace period's banner.
if (!index.includes('<meta name="rz-auth-mfa-required" content="off">')) throw new Error('web/static/index.html lacks the rz-auth-mfa-required meta marker');
// And for WebAuthn: without it the page would never offer passkeys.
if (!index.includes('<meta name="rz-auth-passkeys" content="off">')) throw new Error('web/static/index.html lacks the rz-auth-passkeys meta marker');
writeFileSync(indexFile, index.replace('<!-- modulepreload -->', preload));
rmSync(out, { recursive: true, force: true });
renameSync(next, out);
