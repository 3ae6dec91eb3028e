import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');
/** Past this, a file is split by concept (DEVELOPERS.md). */
const MAX_LINES = 250;

const sources = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => join(SRC, f));

/** The src/ files `file` imports or re-exports from, type-only imports included. */
function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const targets: string[] = [];
  for (const statement of source.statements) {
    const specifier = (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier;
    if (!specifier || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) continue;
    const target = resolve(dirname(file), specifier.text.replace(/\.js$/, '.ts'));
    if (existsSync(target)) targets.push(target);
  }
  return targets;
}

/** Every cycle a depth-first walk meets, each as the chain of files that closes it. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...path.slice(path.indexOf(next)), next].map((f) => relative(SRC, f)).join(' -> '));
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

describe('src/ module graph', () => {
  it('has no import cycle, type-only imports included', () => {
    const graph = new Map(sources.map((file) => [file, importsOf(file)]));
    expect(graph.size).toBeGreaterThan(100);
    expect(cycles(graph)).toEqual([]);
  });

  it(`has no file over ${MAX_LINES} lines`, () => {
    const long = sources.map((file) => [relative(SRC, file), readFileSync(file, 'utf8').split('\n').length - 1] as const).filter(([, lines]) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });
});
