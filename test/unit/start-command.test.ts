import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startCommand } from '../../bench/servers.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/** `npm start`'s settings as the benchmark reads them: `NAME=value … node --flag …`. */
function settings(): string {
  const { env, flags } = startCommand();
  return [...Object.entries(env).map(([name, value]) => `${name}=${value}`), 'node', ...flags].join(' ');
}

/*
 * The memory settings (glibc variables, V8 flags) live in two places: `npm start` and the CLI's
 * shebang, which is what `npx rz-auth serve` and an installed `rz-auth` run. They must not drift.
 */
describe('start command', () => {
  it('the benchmark starts rz-auth with exactly the settings of npm start, values holding `=` included', () => {
    const { scripts } = JSON.parse(read('package.json')) as { scripts: { start: string } };
    expect(`${settings()} dist/cli.js serve`).toBe(scripts.start);
    expect(startCommand().env.GLIBC_TUNABLES).toBe('glibc.malloc.hugetlb=1');
  });

  it('the CLI shebang carries the same environment and Node flags as npm start', () => {
    expect(read('src/cli.ts').split('\n')[0]).toBe(`#!/usr/bin/env -S ${settings()}`);
  });
});
