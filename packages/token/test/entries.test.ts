import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The WebCrypto twin runs in browsers and edge runtimes: nothing it loads may import a `node:`
 * module or a package; and the package as a whole has no runtime dependency (contract §14.7).
 */

const SRC = resolve(import.meta.dirname, '../src');
const IMPORT = /^(?:import|export)[^'"]*from '([^']+)'/gm;

/** Every module specifier in the files `entry` loads, following relative imports. */
function specifiers(entry: string, seen = new Set<string>()): string[] {
  if (seen.has(entry)) return [];
  seen.add(entry);
  const found: string[] = [];
  for (const [, specifier = ''] of readFileSync(entry, 'utf8').matchAll(IMPORT)) {
    if (specifier.startsWith('.')) found.push(...specifiers(join(dirname(entry), specifier.replace(/\.js$/, '.ts')), seen));
    else found.push(specifier);
  }
  return found;
}

describe('the entries', () => {
  it('web.ts loads no node: module and no package; index.ts only node:crypto', () => {
    expect(specifiers(join(SRC, 'web.ts'))).toEqual([]);
    expect(new Set(specifiers(join(SRC, 'index.ts')))).toEqual(new Set(['node:crypto']));
  });

  it('package.json declares no runtime dependency and exports both entries', () => {
    const manifest = JSON.parse(readFileSync(resolve(SRC, '../package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.peerDependencies).toBeUndefined();
    expect(Object.keys(manifest.exports as object)).toEqual(['.', './web']);
  });
});
