import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startCommand } from '../../bench/servers.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/*
 * The memory settings (glibc variables, V8 flags) live in two places: `npm start` and the CLI's
 * shebang, which is what `npx rz-auth serve` and an installed `rz-auth` run. They must not drift.
 */
describe('start command', () => {
  it('the CLI shebang carries the same environment and Node flags as npm start', () => {
    const { scripts } = JSON.parse(read('package.json')) as { scripts: { start: string } };
    const start = /^(?<settings>(?:[A-Z_]+=\S+ )*node(?: --\S+)*) dist\/cli\.js serve$/.exec(scripts.start);
    expect(start?.groups?.settings).toBeDefined();
    expect(read('src/cli.ts').split('\n')[0]).toBe(`#!/usr/bin/env -S ${start?.groups?.settings ?? ''}`);
  });

  it('the benchmark starts rz-auth with exactly those settings, values holding `=` included', () => {
    const { scripts } = JSON.parse(read('package.json')) as { scripts: { start: string } };
    const { env, flags } = startCommand();
    const assignments = Object.entries(env).map(([name, value]) => `${name}=${value}`);
    expect([...assignments, 'node', ...flags, 'dist/cli.js serve'].join(' ')).toBe(scripts.start);
    expect(env.GLIBC_TUNABLES).toBe('glibc.malloc.hugetlb=1');
  });
});
