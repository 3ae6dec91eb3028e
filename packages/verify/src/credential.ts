import type { CredentialRefused } from './errors.js';

/** Where the verifier reports what its host's operator must act on. */
export interface Logger {
  error(message: string): void;
}

/**
 * Whether rz-auth refuses this service's credential. A refusal is logged the first time only, and
 * again only after rz-auth accepted the credential in between: every request fails while it lasts,
 * and one line per request would bury the one thing the operator must read.
 */
export class CredentialWatch {
  private refused = false;

  constructor(private readonly logger: Logger) {}

  refusedBy(error: CredentialRefused): void {
    if (this.refused) return;
    this.refused = true;
    try {
      this.logger.error(
        `@rz-auth/verify: rz-auth refused this service's credential (${error.request} answered ${error.status}): ` +
          'every token is refused with 503 service_credential_refused until it is accepted again. ' +
          'Check serviceToken against `rz-auth services list` (revoked, or not a service credential).',
      );
    } catch {
      // A logger that throws (not ready yet) must not turn a refusal into another failure.
    }
  }

  /** rz-auth answered a request made with the credential: a later refusal is news again. */
  accepted(): void {
    this.refused = false;
  }
}
