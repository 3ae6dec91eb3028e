import { randomInt } from 'node:crypto';
import { setTimeout } from 'node:timers/promises';
import * as argon2 from 'argon2';
import type { Argon2Params } from '../config.js';
import { ProblemError } from '../errors.js';
import type { HashTiming } from '../observability/metrics/queues.js';
import { NO_TRACING, type Tracing } from '../observability/tracing/tracing.js';

const DUMMY_PASSWORD = 'rz-auth dummy password for unknown accounts';
/** How many of the latest checks at the current parameters a weaker hash's check may be padded to. */
const RECENT_CHECKS = 32;

/**
 * How long a check of a weaker hash that took `tookMs` waits, so that it lasts as long as one of
 * the recent checks at the current parameters, drawn by `draw`: it then has their spread, where
 * padding to a fixed figure (their mean, say) would be a floor that a real check often goes below.
 */
export function paddingMs(tookMs: number, recentMs: readonly number[], draw: (count: number) => number = randomInt): number {
  return Math.max(0, (recentMs[draw(recentMs.length)] ?? 0) - tookMs);
}

/** What watches the hasher: hash durations (metrics) and spans (traces); neither by default. */
export interface HasherObservers {
  readonly timing?: HashTiming | null;
  readonly tracing?: Tracing;
}

/**
 * argon2id hashing on libuv's thread pool (never the event loop), with a cap on concurrent hashes:
 * each one holds `memoryKiB` of memory, so a login flood must queue rather than exhaust memory or
 * take every pool thread from the rest of the process.
 */
export class PasswordHasher {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  /** Checks at the current parameters so far: the next one's duration replaces the oldest. */
  private checks = 0;

  private constructor(
    private readonly options: argon2.HashOptions,
    /** What unknown emails verify against: made once, before the first login can arrive. */
    private readonly dummyHash: string,
    /** How long the latest checks at the current parameters took (ms): a weaker hash's check is padded to one of them. */
    private readonly recentMs: number[],
    private readonly concurrency: number,
    private readonly queueLimit: number,
    private readonly timing: HashTiming | null,
    private readonly tracing: Tracing,
  ) {}

  /**
   * A hasher with its dummy hash ready. Made at start-up, so no login ever makes it: a login that
   * did could fail to (queue full, argon2 failing) and leave unknown emails on a path of their own.
   * @throws when argon2 cannot hash with these parameters (the service then refuses to start).
   */
  static async create(params: Argon2Params, concurrency: number, queueLimit: number, observed: HasherObservers = {}): Promise<PasswordHasher> {
    const options: argon2.HashOptions = {
      type: argon2.argon2id,
      memoryCost: params.memoryKiB,
      timeCost: params.timeCost,
      parallelism: params.parallelism,
    };
    const started = performance.now();
    const dummyHash = await argon2.hash(DUMMY_PASSWORD, options);
    return new PasswordHasher(options, dummyHash, [performance.now() - started], concurrency, queueLimit, observed.timing ?? null, observed.tracing ?? NO_TRACING);
  }

  /** Hashes and checks waiting for a slot. */
  get queueDepth(): number {
    return this.waiting.length;
  }

  hash(password: string): Promise<string> {
    return this.limited(async () => {
      const started = performance.now();
      const hash = await argon2.hash(password, this.options);
      this.timing?.('hash', (performance.now() - started) / 1000);
      return hash;
    });
  }

  /**
   * Checks `password` against a stored hash. A hash made before the parameters were raised is
   * cheaper to check, and stays so until its owner logs in; its check holds the slot as long as one
   * of the latest checks at the current parameters ({@link paddingMs}), or a login's timing would
   * tell those accounts from unknown emails. Traced as `rz.password.verify`, its wait for a slot included.
   */
  verify(hash: string, password: string): Promise<boolean> {
    const weaker = this.needsRehash(hash);
    return this.tracing.inSpan('rz.password.verify', {}, () => this.limited(async () => {
      const started = performance.now();
      const ok = await argon2.verify(hash, password).catch(() => false);
      const took = performance.now() - started;
      this.timing?.('verify', took / 1000);
      if (!weaker) {
        this.recentMs[this.checks++ % RECENT_CHECKS] = took;
      } else {
        const wait = paddingMs(took, this.recentMs);
        if (wait > 0) await setTimeout(wait);
      }
      return ok;
    }));
  }

  /**
   * Verifies against the dummy hash, which has the same parameters: a login for an unknown email
   * takes the very path of one for a known email with a wrong password, the same queue and its
   * refusals included, so neither its answer nor its timing reveals whether the account exists.
   */
  async verifyDummy(password: string): Promise<false> {
    await this.verify(this.dummyHash, password);
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
