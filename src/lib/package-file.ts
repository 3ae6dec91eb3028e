import { existsSync } from 'node:fs';

/**
 * A file of the rz-auth package, found from wherever its code runs: a module under src/ (tests,
 * `npm run dev`) or the single bundle at dist/cli.js (`npm start`, the bin). Those sit at different
 * depths, so the path is taken from the nearest directory above that holds a package.json.
 */
export function packageFile(path: string, from: string | URL = import.meta.url): URL {
  let dir = new URL('./', from);
  while (!existsSync(new URL('package.json', dir))) {
    const parent = new URL('../', dir);
    if (parent.href === dir.href) throw new Error(`no package.json in any directory above ${String(from)}`);
    dir = parent;
  }
  return new URL(path, dir);
}
