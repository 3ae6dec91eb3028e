/** Time is a dependency so expiry and windows are testable without sleeping. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** ISO 8601 in UTC with a `Z` suffix and milliseconds, e.g. `2026-11-21T09:30:00.000Z`. */
export const iso = (ms: number): string => new Date(ms).toISOString();

/** A day in milliseconds, for lifetimes and retention counted in days. */
export const DAY_MS = 86_400_000;
