import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { packageFile } from '../../src/lib/package-file.js';
import { tempDir } from '../helpers/app.js';

/** Source modules and the bundle sit at different depths; both find the package's files. */
describe('packageFile', () => {
  const temp = tempDir();
  afterAll(() => temp.remove());
  writeFileSync(join(temp.dir, 'package.json'), '{}');
  mkdirSync(join(temp.dir, 'src', 'users'), { recursive: true });
  mkdirSync(join(temp.dir, 'dist'), { recursive: true });
  const root = pathToFileURL(`${temp.dir}/`).href;

  it('resolves from a module two levels down, as under src/', () => {
    expect(packageFile('assets/list.txt', pathToFileURL(join(temp.dir, 'src', 'users', 'policy.js'))).href).toBe(`${root}assets/list.txt`);
  });

  it('resolves from the bundle one level down, as dist/cli.js', () => {
    expect(packageFile('dist/public/', pathToFileURL(join(temp.dir, 'dist', 'cli.js'))).href).toBe(`${root}dist/public/`);
  });

  it("finds this repository's own package.json by default", () => {
    expect(packageFile('package.json').href).toBe(new URL('../../package.json', import.meta.url).href);
  });

  it("skips dist/'s package.json, which only says the bundle is CommonJS", () => {
    const nested = join(temp.dir, 'nested');
    mkdirSync(join(nested, 'dist'), { recursive: true });
    writeFileSync(join(nested, 'package.json'), '{"name":"rz-auth"}');
    writeFileSync(join(nested, 'dist', 'package.json'), '{"type":"commonjs"}');
    expect(packageFile('assets/list.txt', pathToFileURL(join(nested, 'dist', 'cli.js'))).href).toBe(`${root}nested/assets/list.txt`);
  });

  it('fails loudly when no directory above holds a package.json', () => {
    expect(() => packageFile('package.json', 'file:///no-such-dir/a/b.js')).toThrow(/no package.json in any directory above/);
  });
});
