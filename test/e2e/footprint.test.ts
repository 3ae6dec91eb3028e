import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/app.js';
import { builtCli, ROOT, request, spawnServer } from '../helpers/server-process.js';

/**
 * What a running server loads is part of its memory: every module is source text, bytecode and
 * objects that stay for the life of the process. Node's fetch (undici, a 750 KB bundle) is one rz-auth
 * never calls; on Node 22 and newer an `import … from 'node:http'` loads it anyway (src/lib/node-http.ts).
 */
describe('footprint of a running server', { timeout: 60_000 }, () => {
  const temp = tempDir();
  afterAll(() => temp.remove());

  it("never loads Node's fetch implementation, across start-up, requests and shutdown", async () => {
    const probe = join(temp.dir, 'probe.mjs');
    const report = join(temp.dir, 'modules.json');
    writeFileSync(
      probe,
      `import { writeFileSync } from 'node:fs';\nprocess.on('exit', () => writeFileSync(${JSON.stringify(report)}, JSON.stringify(process.moduleLoadList)));\n`,
    );
    const server = await spawnServer({ DATABASE_URL: `sqlite:${join(temp.dir, 'rz.db')}`, NODE_OPTIONS: `--import=${probe}` });
    try {
      expect((await request(server.url, 'GET', '/api/me', { token: 'rz_not-a-real-token' })).status).toBe(401);
      expect((await request(server.url, 'GET', '/openapi.json')).status).toBe(200);
      expect((await fetch(`${server.url}/developers`)).status).toBe(200);
    } finally {
      expect(await server.stop('SIGTERM')).toBe(0);
    }
    const modules = JSON.parse(readFileSync(report, 'utf8')) as string[];
    // The probe saw the process's internals (a few hundred entries), not an empty list.
    expect(modules).toContain('NativeModule internal/http');
    expect(modules.filter((name) => name.includes('undici'))).toEqual([]);
  });

  it('runs a bundle of ASCII only, whose source V8 keeps at one byte per character', () => {
    // One non-ASCII character anywhere in it, even in a comment, and Node decodes the whole 1.8 MB
    // source into a two-byte string (3.7 MB), which V8 keeps for the life of the process.
    const bundle = readFileSync(builtCli());
    expect(bundle.findIndex((byte) => byte > 0x7f)).toBe(-1);
    // The libraries' licence notices, one of them with a non-ASCII name, are in a file beside it.
    expect(bundle.toString('latin1')).toContain('/*! For license information please see cli.js.LEGAL.txt */');
    expect(readFileSync(join(ROOT, 'dist', 'cli.js.LEGAL.txt'), 'utf8')).toMatch(/MIT Licen[cs]e/);
  });
});
