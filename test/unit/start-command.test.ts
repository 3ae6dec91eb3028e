import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/*
 * rz-auth starts as any Node program does: no malloc variables, no V8 flags, nothing that only
 * works with one C library or one Node release. A setting that helps a deployment is documented
 * as an opt-in (docs/deployment.md), never baked into the start.
 */
describe('a plain start', () => {
  it('npm start is `node dist/cli.js serve`', () => {
    const { scripts } = JSON.parse(read('package.json')) as { scripts: { start: string } };
    expect(scripts.start).toBe('node dist/cli.js serve');
  });

  it('the CLI, which `npx rz-auth` and an installed rz-auth run, starts with a plain shebang', () => {
    expect(read('src/cli.ts').split('\n')[0]).toBe('#!/usr/bin/env node');
  });
});
