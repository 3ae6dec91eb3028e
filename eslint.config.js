import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/*
 * The layers of src/ (DEVELOPERS.md, "Where things are"), enforced rather than described. Each
 * pattern is a relative import specifier. One config object's options replace another's for the
 * same rule, so the store and lib/ rules repeat the one every folder has.
 */
const notHttp = {
  regex: '^(\\.\\./)+http/',
  message: 'Only the server (src/app.ts, src/server.ts) assembles src/http/: route files are written against src/api/.',
};
const notAFolder = {
  regex: '^\\.\\./[^/]+/',
  message: 'src/lib/ is below every domain folder: it imports lib/ and the top-level modules (errors, clock) only.',
};
const onlyWhatStoresUse = {
  // Other stores, the shapes of audit and change events, db/, lib/, errors and clock; nothing else.
  regex: '^(?!.*(?:store|events)\\.js$)(?!(?:\\.\\./)+(?:db|lib)/)(?!(?:\\.\\./)+(?:clock|errors)\\.js$)\\.{1,2}/',
  message: 'A store knows tables, never rules: it imports other stores, event shapes, db/ and lib/, not a service, a route or a loop.',
};
const layers = (...patterns) => ['error', { patterns }];
// better-sqlite3 12 aborts Node 24: the driver is only ever loaded through loadSqlite().
const sqliteDriver = { name: 'better-sqlite3', allowTypeImports: true, message: 'Use loadSqlite() from src/db/database.ts.' };

export default tseslint.config(
  { ignores: ['dist/', 'types/openapi.d.ts', 'node_modules/', 'coverage/', 'test-results/', 'bench/results/', 'scratch/', 'web/dist/', 'packages/*/dist/'] },
  js.configs.recommended,
  ...tseslint.configs.strict,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-control-regex': 'off',
      'guard-for-in': 'error',
      'no-restricted-syntax': [
        'error',
        { selector: 'ForInStatement', message: 'Use for...of over Object.keys/entries.' },
        // One function decides who a client is (TRUST_PROXY included); Fastify's request.ip is not configured.
        { selector: "MemberExpression[property.name='ip']", message: 'Use clientAddressOf() from src/http/client-address.ts.' },
      ],
      '@typescript-eslint/no-restricted-imports': ['error', { paths: [sqliteDriver] }],
    },
  },
  {
    // Domains count and trace through small interfaces (src/observability/): neither library is
    // imported anywhere else, so what is measured, and at what cost, is decided in one folder.
    files: ['src/**/*.ts'],
    ignores: ['src/observability/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: [sqliteDriver],
        patterns: [{ group: ['@opentelemetry/*', 'prom-client'], allowTypeImports: true, message: 'Count and trace through src/observability/ (its metrics/ and tracing/tracing.ts interfaces).' }],
      }],
    },
  },
  {
    // With tracing off no OpenTelemetry module may load: only the SDK's own file (dist/tracing.js,
    // imported when tracing is on, with server-spans.ts) imports it; the rest calls it through src/observability/tracing/tracing.ts.
    files: ['src/observability/**/*.ts'],
    ignores: ['src/observability/tracing/sdk.ts', 'src/observability/tracing/server-spans.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: [sqliteDriver],
        patterns: [{ group: ['@opentelemetry/*'], allowTypeImports: true, message: 'Only src/observability/tracing/sdk.ts loads OpenTelemetry; use Tracing from src/observability/tracing/tracing.ts.' }],
      }],
    },
  },
  { files: ['src/*/**/*.ts'], ignores: ['src/http/**'], rules: { 'no-restricted-imports': layers(notHttp) } },
  { files: ['src/lib/**/*.ts'], rules: { 'no-restricted-imports': layers(notHttp, notAFolder) } },
  { files: ['src/**/*store*.ts'], rules: { 'no-restricted-imports': layers(notHttp, onlyWhatStoresUse) } },
  {
    // The verifier runs in other services, whose framework's client address (after their own
    // trusted proxies) is the one to check a token's networks against.
    files: ['packages/verify/src/**'],
    rules: { 'no-restricted-syntax': ['error', { selector: 'ForInStatement', message: 'Use for...of over Object.keys/entries.' }] },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);
