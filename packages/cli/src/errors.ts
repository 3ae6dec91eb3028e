/** Exit codes of contract §13.8: scripts branch on these, so each failure maps to exactly one. */
export const EXIT = { ok: 0, error: 1, usage: 2, denied: 3, network: 4 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure the CLI reports in one line to stderr and turns into an exit code. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode: ExitCode = EXIT.error) {
    super(message);
    this.name = 'CliError';
  }
}

export const usageError = (message: string): CliError => new CliError(message, EXIT.usage);
export const deniedError = (message: string): CliError => new CliError(message, EXIT.denied);
export const networkError = (message: string): CliError => new CliError(message, EXIT.network);
