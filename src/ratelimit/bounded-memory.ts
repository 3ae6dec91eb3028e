import { RateLimiterMemory, type RateLimiterRes } from 'rate-limiter-flexible';
import type { Quota } from './policies.js';

/**
 * How many keys one policy's in-process counters hold at most (each a record and a timer for a
 * window); past it, the least counted key is forgotten (see BoundedMemoryLimiter). Redis needs no
 * such cap: every key there expires with its window.
 */
export const MAX_KEYS_PER_POLICY = 20_000;

/** What one policy's in-process counters are built from (rate-limiter-flexible's options). */
export interface CounterOptions {
  readonly keyPrefix: string;
  readonly points: number;
  readonly duration: number;
}

interface Counted {
  count: number;
  /** Milliseconds since the epoch at which the key's window ends. */
  readonly endsAt: number;
  /** The count, capped at one over the quota, when the key was last filed in {@link BoundedMemoryLimiter.levels}. */
  level: number;
}

/**
 * rate-limiter-flexible's in-process counters with a cap on how many keys one policy holds. The
 * library keeps a record and a timer per key for a whole window, and keys come from clients
 * (addresses, submitted emails), so without a cap any client could grow the store without limit.
 *
 * When a new key arrives at the cap, keys whose window has ended go first; then the key counted
 * least in its window (the oldest of those; counts past the quota are all alike, spent). That is
 * safe enough because forgetting a key gives its owner back only the requests it has used, and a key
 * counted k times is forgotten only once every other key in the store has been counted at least k
 * times in its own window: to reset the counter of an email under a brute force of k guesses, a
 * client must first send k * (cap - 1) requests that the address limit admitted, within one window,
 * for one extra guess per cap - 1 requests at best. A flood of new keys, each counted once, only
 * pushes out its own keys.
 *
 * Only {@link consume} creates keys here (rz-auth calls nothing else that writes).
 */
export class BoundedMemoryLimiter extends RateLimiterMemory {
  /** Every key counted in a window that has not ended, in the order their windows began. */
  private readonly counted = new Map<string, Counted>();
  /**
   * Keys by level; a key's count only grows, so it may have outgrown its level since (see evict).
   * A Map, not an array: a level can be as high as the quota, which may be a billion.
   */
  private readonly levels = new Map<number, Set<string>>();

  constructor(
    options: CounterOptions,
    private readonly maxKeys: number,
  ) {
    super(options);
  }

  override consume(key: string | number, points = 1, options?: Record<string, unknown>): Promise<RateLimiterRes> {
    this.note(String(key), points);
    return super.consume(key, points, options);
  }

  /** How many keys the library's store holds now, read from its own export. */
  storedKeys(): number {
    return this.dump().storage.length;
  }

  /** Mirrors the library's count for `key`, first making room for it if it is new. */
  private note(key: string, points: number): void {
    const now = Date.now();
    const known = this.counted.get(key);
    if (known && known.endsAt > now) {
      known.count += points;
      return;
    }
    if (known) this.drop(key, known);
    else this.makeRoom(now);
    const entry: Counted = { count: points, endsAt: now + this.msDuration, level: 0 };
    this.counted.set(key, entry);
    this.file(key, entry);
  }

  private makeRoom(now: number): void {
    // Every window of a policy is as long as every other, so those that began first end first.
    for (const [key, entry] of this.counted) {
      if (entry.endsAt > now) break;
      this.drop(key, entry);
    }
    if (this.counted.size >= this.maxKeys) this.evict();
  }

  /**
   * Forgets the least counted key. Levels are scanned upwards; a key found below its current count
   * is filed again at that count (each key moves up at most once per level, so the scan's cost is
   * paid for by the counting that moved it).
   */
  private evict(): void {
    for (;;) {
      let refiled = false;
      for (const level of [...this.levels.keys()].sort((a, b) => a - b)) {
        for (const key of this.levels.get(level) ?? []) {
          const entry = this.counted.get(key);
          this.unfile(key, level);
          if (!entry) continue;
          if (this.levelOf(entry) > entry.level) {
            this.file(key, entry);
            refiled = true;
            continue;
          }
          this.counted.delete(key);
          void this.delete(key);
          return;
        }
      }
      // Every key scanned had outgrown its level and was filed again, perhaps at a level the scan
      // had not listed: scan again, at the levels where they are now.
      if (!refiled) return;
    }
  }

  private drop(key: string, entry: Counted): void {
    this.counted.delete(key);
    this.unfile(key, entry.level);
  }

  private file(key: string, entry: Counted): void {
    entry.level = this.levelOf(entry);
    let filed = this.levels.get(entry.level);
    if (!filed) this.levels.set(entry.level, (filed = new Set()));
    filed.add(key);
  }

  private unfile(key: string, level: number): void {
    const filed = this.levels.get(level);
    filed?.delete(key);
    if (filed?.size === 0) this.levels.delete(level);
  }

  /** Counts past the quota are all alike: the key is spent for the rest of its window. */
  private levelOf(entry: Counted): number {
    return Math.min(entry.count, this.points + 1);
  }
}

/**
 * One policy's counters in this process (or, under `serve --workers`, in the primary): one store per
 * policy, so no key prefix, and the caller's key string (cached per credential) is the map key.
 */
export const policyCounter = (quota: Quota, maxKeys = MAX_KEYS_PER_POLICY): BoundedMemoryLimiter =>
  new BoundedMemoryLimiter({ keyPrefix: '', points: quota.quota, duration: quota.windowSeconds }, maxKeys);
