import type { Kysely } from 'kysely';
import type { Tables } from '../src/db/tables.js';

/*
 * Sizing runs of single-use bodies (bench/mfa.ts, bench/passkey.ts): each request needs a body of
 * its own, made before the run, so a run is given enough for the fastest pace its scenario has
 * shown. The bodies of one run share one expiry, to the millisecond, by which the store finds
 * those left unused: how many were used tells the pace, and the rest are removed.
 */

/** Requests per second assumed before a scenario's first run shows its pace. */
const FIRST_RATE = 2500;
/**
 * Bodies made beyond the fastest pace a scenario's runs have shown: on a shared machine one slice
 * can run three times as fast as the one before, and a slice that runs out fails the run.
 */
const MARGIN = 3;
/** The least pace assumed, requests per second: a slow slice must not starve the next. */
const MIN_RATE = 200;

/** One run's bodies: how many, for how long, and their common expiry. */
interface Run {
  readonly expires: string;
  readonly issued: number;
  readonly seconds: number;
}

export class Pace {
  private readonly fastest = new Map<string, number>();
  private readonly runs = new Map<string, Run>();

  /** `table` holds the single-use rows the bodies name: `mfa_token`s or WebAuthn challenges. */
  constructor(
    private readonly db: Kysely<Tables>,
    private readonly table: 'mfa_pending_logins' | 'webauthn_challenges',
  ) {}

  /** Ends the last run of `scenario` (its pace noted, its leftovers removed); the bodies a run of `seconds` needs. */
  async wanted(scenario: string, seconds: number): Promise<number> {
    const run = this.runs.get(scenario);
    if (run) {
      const { db, table } = this;
      const left = await db.selectFrom(table).select((eb) => eb.fn.countAll<number | string>().as('n')).where('expires_at', '=', run.expires).executeTakeFirstOrThrow();
      this.fastest.set(scenario, Math.max(this.fastest.get(scenario) ?? 0, (run.issued - Number(left.n)) / run.seconds));
      await db.deleteFrom(table).where('expires_at', '=', run.expires).execute();
      this.runs.delete(scenario);
    }
    const seen = this.fastest.get(scenario);
    return Math.ceil(seconds * (seen === undefined ? FIRST_RATE : Math.max(seen * MARGIN, MIN_RATE)));
  }

  /** Records a run of `scenario`: `issued` bodies lasting `seconds`, whose rows expire at `expires`. */
  started(scenario: string, expires: string, issued: number, seconds: number): void {
    this.runs.set(scenario, { expires, issued, seconds });
  }
}
