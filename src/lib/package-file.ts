import { existsSync, readFileSync } from 'node:fs';

/** True when `dir` holds the package's own package.json, not dist/'s, which only sets the bundle's module type. */
const isPackageRoot = (dir: URL): boolean => {
  const file = new URL('package.json', dir);
  if (!existsSync(file)) return false;
  const fields = Object.keys(JSON.parse(readFileSync(file, 'utf8')) as object);
  return !(fields.length === 1 && fields[0] === 'type');
};

/**
 * A file of the rz-auth package, found from wherever its code runs: a module under src/ (tests,
 * `npm run dev`) or the single bundle at dist/cli.js (`npm start`, the bin). Those sit at different
 * depths, so the path is taken from the nearest directory above that holds the package's package.json.
 */
export function packageFile(path: string, from: string | URL = import.meta.url): URL {
  let dir = new URL('./', from);
  while (!isPackageRoot(dir)) {
    const parent = new URL('../', dir);
    if (parent.href === dir.href) throw new Error(`no package.json in any directory above ${String(from)}`);
    dir = parent;
  }
  return new URL(path, dir);
}
