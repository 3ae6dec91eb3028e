import { type ParseArgsConfig, parseArgs } from 'node:util';

/** Arguments the operator must correct (a missing option, an unknown id): the CLI exits 2. */
export class UsageError extends Error {}

/**
 * `parseArgs`, refusing an option given twice: otherwise the last one silently wins, and
 * `audit list --type a --type b` would look like a filter on both.
 */
export function parseOnce<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  const { tokens } = parseArgs({ ...config, tokens: true });
  const seen = new Set<string>();
  for (const token of tokens ?? []) {
    if (token.kind !== 'option') continue;
    if (seen.has(token.name)) throw new UsageError(`--${token.name} was given more than once`);
    seen.add(token.name);
  }
  return parseArgs(config);
}
