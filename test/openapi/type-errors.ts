import { dirname } from 'node:path';
import ts from 'typescript';

/**
 * The type errors of the project of `tsconfig` (its files, or `rootNames`) with the file at
 * `path` read as `text`, which is never written to disk: how the tests check code against types
 * generated from a document.
 */
export function typeErrorsWith(tsconfig: string, path: string, text: string, rootNames?: string[]): readonly ts.Diagnostic[] {
  const { config } = ts.readConfigFile(tsconfig, (file) => ts.sys.readFile(file));
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, dirname(tsconfig));
  const host = ts.createCompilerHost(parsed.options);
  const { fileExists, readFile } = host;
  host.fileExists = (file) => file === path || fileExists(file);
  host.readFile = (file) => (file === path ? text : readFile(file));
  const program = ts.createProgram({ rootNames: rootNames ?? parsed.fileNames, options: { ...parsed.options, noEmit: true }, host });
  return ts.getPreEmitDiagnostics(program);
}

/** A diagnostic's message on one line of text per part. */
export const messageOf = (diagnostic: ts.Diagnostic): string => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
