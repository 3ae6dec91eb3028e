import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Deps } from './deps.js';
import { usageError } from './errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Options every command takes. */
export const COMMON = {
  host: { type: 'string' },
  debug: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options;

/**
 * Tokens are never taken from the command line: argv is visible to every user of the machine
 * (ps, /proc) and lands in shell history. Naming the option gets its own message, not only
 * "unknown option".
 */
function refuseTokenOnArgv(argv: readonly string[]): void {
  for (const arg of argv) {
    // A token as an argument, or as the value of `--option=value`.
    if (/^--?(token|password|secret)(=|$)/i.test(arg) || /^(--?[^=]*=)?(rz|rza|rzd)_/.test(arg)) {
      throw usageError('A token is never read from the command line (other users can see it). Pipe it in on stdin: rz login --with-token < token.txt, rz token derive --stdin, rz token attenuate');
    }
  }
}

/** node:util parseArgs in strict mode, its errors turned into usage errors (exit 2). */
export function parse<T extends Options>(argv: readonly string[], options: T): ReturnType<typeof parseArgs<{ options: T; strict: true; allowPositionals: false }>>['values'] {
  refuseTokenOnArgv(argv);
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw usageError(err instanceof Error ? err.message : String(err));
  }
}

/** The token piped in, trimmed; an empty stdin is a usage error. Whether it is a token is the caller's to judge. */
export async function tokenFromStdin(deps: Pick<Deps, 'readStdin'>, example: string): Promise<string> {
  const text = (await deps.readStdin()).trim();
  if (text === '') throw usageError(`No token on stdin: ${example}`);
  return text;
}
