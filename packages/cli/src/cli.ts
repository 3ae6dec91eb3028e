import { auth } from './auth.js';
import type { Deps } from './deps.js';
import { CliError, EXIT, type ExitCode } from './errors.js';
import { login } from './login.js';
import { logout } from './logout.js';
import { token } from './token.js';
import { USAGE } from './usage.js';
import { VERSION } from './version.js';

/** Runs one command line; every outcome is an exit code, every message goes to stderr. */
export async function run(argv: readonly string[], deps: Deps): Promise<ExitCode> {
  const [command, ...rest] = argv;
  try {
    if (command === 'login') await login(rest, deps);
    else if (command === 'logout') await logout(rest, deps);
    else if (command === 'auth') await auth(rest, deps);
    else if (command === 'token') await token(rest, deps);
    else if (command === '--version' || command === 'version') deps.stdout(`${VERSION}\n`);
    else if (command === undefined || command === '--help' || command === '-h' || command === 'help') deps.stdout(USAGE);
    else {
      deps.stderr(USAGE);
      return EXIT.usage;
    }
    return EXIT.ok;
  } catch (err) {
    if (deps.signal.aborted) {
      deps.stderr('\nStopped; nothing was stored.\n');
      return EXIT.error;
    }
    if (err instanceof CliError) {
      deps.stderr(`rz: ${err.message}\n`);
      if (err.exitCode === EXIT.usage) deps.stderr('Run rz --help for usage.\n');
      return err.exitCode;
    }
    deps.stderr(`rz: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT.error;
  }
}
