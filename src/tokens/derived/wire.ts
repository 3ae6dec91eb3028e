import type { Kysely } from 'kysely';
import type { Loop } from '../../background.js';
import type { Clock } from '../../clock.js';
import type { Tables } from '../../db/tables.js';
import { DerivedAuthenticator } from './authenticate.js';
import type { DerivedConfig } from './config.js';
import { DerivationKeys } from './keys.js';
import { SeenRecorder } from './seen.js';
import { DerivedStore } from './store.js';

export { checkDerivationKeys } from './key-check.js';
export { DerivationKeys };

/** The parts of derived tokens the composition root hands out (docs/derived-tokens.md). */
export interface Derived {
  /** DERIVE_KEK: wraps derivation keys at creation and rotation. */
  readonly keys: DerivationKeys;
  /** Checks `rzd_` bearers for the authenticator. */
  readonly authenticator: DerivedAuthenticator;
  /** Writes children seen in use (LAST_USED_FLUSH_MS, at most once a minute per child). */
  readonly seen: SeenRecorder;
}

export function createDerived(db: Kysely<Tables>, config: DerivedConfig, clock: Clock, flushMs: number, onError: (error: unknown, what: string) => void): Derived {
  const store = new DerivedStore(db);
  const keys = new DerivationKeys(config.kek);
  const seen = new SeenRecorder((uses) => store.recordSeen(uses), flushMs, (error) => onError(error, 'derived tokens seen flush'));
  const authenticator = new DerivedAuthenticator({ store, keys, seen, clock, maxTtlS: config.maxTtlS, onError: (error) => onError(error, 'derivation key re-wrap') });
  return { keys, authenticator, seen };
}

/** Two write-behind loops as one: token uses and children seen flush together. */
export const bothLoops = (a: Loop, b: Loop): Loop => ({
  start() {
    a.start();
    b.start();
  },
  async stop() {
    await a.stop();
    await b.stop();
  },
});
