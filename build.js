// Builds the service into one file, dist/cli.js (what `npm start` and the bin run), with esbuild.
// Why one file: each ES module a process loads keeps its source, scope data and module records for
// the life of the process. rz-auth and its libraries are about 1,200 modules; as one bundle the
// server starts with about 7 MB less V8 heap and 8 MB less RSS (README, "Memory").
// Whitespace and syntax are minified, names are not, so stack traces still read; the source map
// beside it maps them back to src/ under `node --enable-source-maps`.
// Plain JavaScript so that it runs with no build of its own; `npm run build` calls it after tsc
// has type-checked src/.
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { Buffer } from 'node:buffer';
import { join } from 'node:path';
import process from 'node:process';
import { build } from 'esbuild';

const result = await build({
  entryPoints: [join(import.meta.dirname, 'src', 'cli.ts')],
  outfile: join(import.meta.dirname, 'dist', 'cli.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.19',
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: 'linked',
  // The libraries' licence notices go to dist/cli.js.LEGAL.txt, linked from the bundle: one of them
  // holds a non-ASCII name, and a single such character makes Node decode the whole 1.8 MB source
  // into a two-byte string, 3.7 MB that V8 keeps for the life of the process (README, "Memory").
  legalComments: 'linked',
  write: false,
  logLevel: 'warning',
  external: [
    // Native addons: loaded from node_modules with their compiled binaries.
    'argon2',
    'better-sqlite3',
    'better-sqlite3-napi',
    // The scale-out drivers: imported only when DATABASE_URL or REDIS_URL names them, so the
    // embedded default never loads them.
    'pg',
    'ioredis',
    // Serves its own static files from beside its code.
    '@fastify/swagger-ui',
  ],
  // The bundled CommonJS libraries require Node's built-ins; an ES module has no `require` of its own.
  banner: { js: "import { createRequire as rzCreateRequire } from 'node:module'; const require = rzCreateRequire(import.meta.url);" },
});

// esbuild escapes non-ASCII characters in code (its default charset); anything else that slips
// through (a comment it keeps) would double what the source costs in memory.
const code = result.outputFiles.find((file) => file.path.endsWith('.js'));
const nonAscii = code?.contents.findIndex((byte) => byte > 0x7f) ?? -1;
if (nonAscii !== -1) {
  const around = Buffer.from(code.contents.subarray(Math.max(0, nonAscii - 60), nonAscii + 20)).toString('utf8');
  throw new Error(`dist/cli.js must be ASCII only (V8 would keep it as a two-byte string); byte ${nonAscii}: ...${around}...`);
}

// Written beside the output and renamed over it, so a server starting during a build never loads
// a half-written file; the map first, the code last.
const dist = join(import.meta.dirname, 'dist');
mkdirSync(dist, { recursive: true });
for (const file of result.outputFiles.toSorted((a, b) => Number(a.path.endsWith('.js')) - Number(b.path.endsWith('.js')))) {
  const next = `${file.path}.next-${process.pid}`;
  writeFileSync(next, file.contents, { mode: file.path.endsWith('.js') ? 0o755 : 0o644 });
  renameSync(next, file.path);
}

// What the per-module build before this one left in dist/ (app.js, http/, …): nothing loads it any
// more, and it would only mislead. The page (web/build.js) and the bundle stay.
for (const entry of readdirSync(dist)) {
  if (!/^(public|cli\.js)(\.|$)/.test(entry)) rmSync(join(dist, entry), { recursive: true, force: true });
}
