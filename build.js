// Builds the service into one CommonJS file, dist/cli.js (what `npm start` and the bin run), with esbuild:
// one module to load instead of about 1,200 starts faster and keeps less in memory. Whitespace and
// syntax are minified, names are not, so stack traces still read; the source map beside it maps
// them back to src/ under `node --enable-source-maps`. Plain JavaScript so that it runs with no
// build of its own; `npm run build` calls it after tsc has type-checked src/.
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { build } from 'esbuild';

const common = {
  bundle: true,
  platform: 'node',
  // CommonJS (dist/package.json says so), which Node loads synchronously: Node 20 reads an ES
  // module entry on libuv's thread pool, which starts the pool at its default size before the
  // `serve` command can size it (src/cli.ts).
  format: 'cjs',
  target: 'node20.19',
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: 'linked',
  legalComments: 'linked',
  write: false,
  logLevel: 'warning',
  // The sources locate files beside the bundle with import.meta.url, which CommonJS does not have.
  define: { 'import.meta.url': 'rzImportMetaUrl' },
  banner: { js: "'use strict'; const rzImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
};

/**
 * Tracing's SDK (src/observability/tracing/sdk.ts) is a file of its own, dist/tracing.js, which
 * load.ts beside it imports only when tracing is configured: with tracing off no OpenTelemetry module is loaded, and
 * the OpenTelemetry packages load from node_modules after the SDK's hooks are in place, so that
 * the instrumentations see the modules they patch.
 */
const tracingApart = {
  name: 'tracing-apart',
  setup(b) {
    b.onResolve({ filter: /^\.\/sdk\.js$/ }, (args) => (args.importer.endsWith(join('tracing', 'load.ts')) ? { path: './tracing.js', external: true } : undefined));
  },
};

const tracing = await build({
  ...common,
  entryPoints: [join(import.meta.dirname, 'src', 'observability', 'tracing', 'sdk.ts')],
  outfile: join(import.meta.dirname, 'dist', 'tracing.js'),
  packages: 'external',
});

const result = await build({
  ...common,
  entryPoints: [join(import.meta.dirname, 'src', 'cli.ts')],
  outfile: join(import.meta.dirname, 'dist', 'cli.js'),
  plugins: [tracingApart],
  external: [
    // Tracing: loaded by dist/tracing.js only, from node_modules. The API stays in: prom-client
    // carries it (exemplars), and it holds no SDK, only a facade that does nothing until one starts.
    '@opentelemetry/sdk-*',
    '@opentelemetry/instrumentation*',
    // Native addons: loaded from node_modules with their compiled binaries.
    'argon2',
    'better-sqlite3',
    'better-sqlite3-napi',
    // The scale-out drivers: imported only when DATABASE_URL or REDIS_URL names them.
    'pg',
    'ioredis',
    // Serves its own static files from beside its code.
    '@fastify/swagger-ui',
  ],
});

// Written beside the output and renamed over it, so a server starting during a build never loads
// a half-written file; the map first, the code last.
const dist = join(import.meta.dirname, 'dist');
mkdirSync(dist, { recursive: true });
writeFileSync(join(dist, 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
for (const file of [...tracing.outputFiles, ...result.outputFiles].toSorted((a, b) => Number(a.path.endsWith('.js')) - Number(b.path.endsWith('.js')))) {
  const next = `${file.path}.next-${process.pid}`;
  writeFileSync(next, file.contents, { mode: file.path.endsWith('.js') ? 0o755 : 0o644 });
  renameSync(next, file.path);
}

// Anything else in dist/ is from an older build layout: nothing loads it, and it would only mislead.
for (const entry of readdirSync(dist)) {
  if (!/^(public|cli\.js|tracing\.js|package\.json)(\.|$)/.test(entry)) rmSync(join(dist, entry), { recursive: true, force: true });
}
