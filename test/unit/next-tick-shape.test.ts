import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/*
 * src/lib/next-tick-shape.ts holds one tick object so that the object literal inside
 * process.nextTick stays monomorphic after the process idles through full garbage collections.
 * A child Node process prints V8's own feedback for process.nextTick (%DebugPrint, an intrinsic
 * behind --allow-natives-syntax) after five rounds of scheduling ticks and idling through full
 * collections: no timing is involved.
 */

const MODULE = fileURLToPath(new URL('../../src/lib/next-tick-shape.ts', import.meta.url));

const SCRIPT = `
if (process.env.HOLD) await import(${JSON.stringify(MODULE)});
const noop = () => {};
const turn = () => new Promise((resolve) => setImmediate(resolve));
for (let round = 0; round < 5; round++) {
  for (let i = 0; i < 1000; i++) { process.nextTick(noop); await turn(); }
  for (let i = 0; i < 4; i++) { globalThis.gc(); await turn(); }
}
for (let i = 0; i < 1000; i++) { process.nextTick(noop); await turn(); }
%DebugPrint(process.nextTick);
`;

const dir = mkdtempSync(join(tmpdir(), 'rz-next-tick-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The IC states of the computed-key definitions in process.nextTick's tick-object literal. */
function literalFeedback(hold: boolean): string[] {
  // V8 prints with C stdio, which drops output on a full non-blocking pipe: write to a file.
  const path = join(dir, `feedback-${hold ? 'held' : 'plain'}.txt`);
  const fd = openSync(path, 'w');
  try {
    execFileSync(process.execPath, ['--import', 'tsx', '--allow-natives-syntax', '--expose-gc', '--input-type=module', '-e', SCRIPT], {
      env: { ...process.env, HOLD: hold ? '1' : '' },
      stdio: ['ignore', fd, 'pipe'],
    });
  } finally {
    closeSync(fd);
  }
  return [...readFileSync(path, 'utf8').matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1] ?? '');
}

describe('process.nextTick shape', () => {
  it('without the held tick object, idle collections leave the literal megamorphic (the V8 behaviour worked around)', () => {
    expect(literalFeedback(false)).toContain('MEGAMORPHIC');
  });

  it('with it, every computed-key definition in the literal stays monomorphic', () => {
    const states = literalFeedback(true);
    expect(states.length).toBeGreaterThan(0);
    expect(states.every((s) => s === 'MONOMORPHIC')).toBe(true);
  });
});
