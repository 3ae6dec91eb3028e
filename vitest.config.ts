import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Each file gets its own SQLite file; files run in parallel, tests within a file in order.
    sequence: { concurrent: false },
  },
});
