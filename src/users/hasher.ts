import * as argon2 from 'argon2';
import type { Argon2Params } from '../config.js';
import { ProblemError } from '../errors.js';

/**
 * argon2id hashing on libuv's thread pool (never the event loop), with a cap on concurrent hashes:
 * each one holds `memoryKiB` of memory, so a login flood must queue rather than exhaust memory or
 * take every pool thread from the rest of the process.
 */
export class PasswordHasher {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private dummyHash: Promise<string> | undefined;
  private readonly options: argon2.HashOptions;

  constructor(
    params: Argon2Params,
    private readonly concurrency: number,
    private readonly queueLimit: number,
  ) {
    this.options = {
      type: argon2.argon2id,
      memoryCost: params.memoryKiB,
      timeCost: params.timeCost,
      parallelism: params.parallelism,
    };
  }

  hash(password: string): Promise<string> {
    return this.limited(() => argon2.hash(password, this.options));
  }

  verify(hash: string, password: string): Promise<boolean> {
    return this.limited(() => argon2.verify(hash, password).catch(() => false));
  }

  /**
   * Verifies against a fixed dummy hash with the same parameters, so a login for an unknown email
   * costs the same time as one for a known email with a wrong password.
   */
  async verifyDummy(password: string): Promise<false> {
    this.dummyHash ??= this.hash('rz-auth dummy password for unknown accounts');
    await this.verify(await this.dummyHash, password);
    return false;
  }

  /** True when a stored hash uses weaker parameters than the current ones. */
  needsRehash(hash: string): boolean {
    try {
      return argon2.needsRehash(hash, this.options);
    } catch {
      return true;
    }
  }

  private async limited<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.queueLimit) {
        throw new ProblemError('rate_limited', {
          detail: 'Too many password checks are queued. Retry in a moment.',
          headers: { 'retry-after': '1' },
        });
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await task();
    } finally {
      // Hand the slot straight to the next waiter, or free it.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
