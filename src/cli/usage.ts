import { type ParseArgsConfig, parseArgs } from 'node:util';
import { isUuid } from '../lib/ids.js';
import { redactEcho } from '../lib/redact.js';

/** Arguments the operator must correct (a missing option, an unknown id): the CLI exits 2. */
export class UsageError extends Error {}

/**
 * `parseArgs`, refusing an option given twice: otherwise the last one silently wins, and
 * `audit list --type a --type b` would look like a filter on both.
 */
export function parseOnce<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  let tokens: ReturnType<typeof parseArgs<T & { tokens: true }>>['tokens'];
  try {
    ({ tokens } = parseArgs({ ...config, tokens: true }));
  } catch (error) {
    // An unknown option, a missing value, a stray argument: the operator's to correct. The message
    // quotes what was typed, which can be a token pasted in the wrong place (it would stay in the
    // scrollback and CI logs), so it is shown redacted, cut short, without control characters.
    throw new UsageError(redactEcho((error as Error).message, 300));
  }
  const seen = new Set<string>();
  for (const token of tokens ?? []) {
    if (token.kind !== 'option') continue;
    if (seen.has(token.name)) throw new UsageError(`--${token.name} was given more than once`);
    seen.add(token.name);
  }
  return parseArgs(config);
}

/**
 * The one id a command takes, a UUID as the list commands print it. Checked before it is used or
 * shown back: an error never echoes 100 KB or terminal control bytes an operator pasted.
 */
export function onlyId(positionals: readonly string[], usage: string): string {
  const [id] = positionals;
  if (positionals.length !== 1 || id === undefined || !isUuid(id)) throw new UsageError(`${usage} (one UUID, as the list prints it)`);
  return id;
}

/** A command that takes no arguments refuses any, rather than ignore what the operator meant. */
export function noArguments(args: readonly string[], command: string): void {
  if (args.length > 0) throw new UsageError(`${command} takes no arguments`);
}
