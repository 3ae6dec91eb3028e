import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
      // better-sqlite3 12 aborts Node 24: the driver is only ever loaded through loadSqlite().
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: [{ name: 'better-sqlite3', allowTypeImports: true, message: 'Use loadSqlite() from src/db/database.ts.' }],
      }],
    },
  },
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
