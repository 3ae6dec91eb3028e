import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { loadSqlite } from '../../src/db/database.js';

const require = createRequire(import.meta.url);

// Regression: better-sqlite3 12 aborted Node 24.19+ ("Assertion failed: (env) != nullptr" in
// Statement::~Statement) as soon as a statement was garbage-collected.
describe('SQLite driver', () => {
  it('loads the Node-API build on Node 22+ and the classic build on Node 20', () => {
    const major = Number(process.versions.node.split('.')[0]);
    const expected = major >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';
    expect(loadSqlite()).toBe(require(expected));
  });
});
