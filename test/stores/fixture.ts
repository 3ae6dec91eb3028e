import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { AppStore } from '../../src/apps/store.js';
import { AuditStore } from '../../src/audit/store.js';
import { ChangeStore } from '../../src/changes/store.js';
import type { Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { KeyStore } from '../../src/keys/store.js';
import { ServiceCredentialStore } from '../../src/service-credentials/store.js';
import { SessionStore } from '../../src/account/session-store.js';
import { TokenLifecycleStore } from '../../src/tokens/lifecycle-store.js';
import { type NewToken, TokenStore } from '../../src/tokens/store.js';
import { UserStore } from '../../src/account/user-store.js';
import { WebhookQueue } from '../../src/webhooks/queue.js';
import { WebhookStore } from '../../src/webhooks/store.js';

/** A real database of one dialect for a store suite. */
export interface StoreHarness {
  open(): Promise<Database>;
  cleanup(): Promise<void>;
}

/** Every store over one migrated database. */
export interface Stores {
  readonly database: Database;
  readonly users: UserStore;
  readonly sessions: SessionStore;
  readonly tokens: TokenStore;
  readonly apps: AppStore;
  readonly keys: KeyStore;
  readonly changes: ChangeStore;
  readonly services: ServiceCredentialStore;
  readonly audit: AuditStore;
  readonly lifecycle: TokenLifecycleStore;
  readonly webhooks: WebhookStore;
  readonly queue: WebhookQueue;
}

export async function openStores(harness: StoreHarness): Promise<Stores> {
  const database = await harness.open();
  await migrateToLatest(database.db);
  const { db } = database;
  return {
    database,
    users: new UserStore(db),
    sessions: new SessionStore(db),
    tokens: new TokenStore(db),
    apps: new AppStore(db),
    keys: new KeyStore(db),
    changes: new ChangeStore(db),
    services: new ServiceCredentialStore(db),
    audit: new AuditStore(db),
    lifecycle: new TokenLifecycleStore(db),
    webhooks: new WebhookStore(db),
    queue: new WebhookQueue(db),
  };
}

/**
 * The stores of a fresh database for the enclosing describe block: the object is filled before its
 * tests run, and the database closed and removed after them.
 */
export function useStores(harness: () => StoreHarness): Stores {
  const stores = {} as Stores;
  let h: StoreHarness | undefined;
  beforeAll(async () => {
    h = harness();
    Object.assign(stores, await openStores(h));
  });
  afterAll(async () => {
    await stores.database?.close();
    await h?.cleanup();
  });
  return stores;
}

/** A fixed instant, `n` seconds into a fixed minute. */
export const at = (n: number) => new Date(Date.UTC(2026, 10, 21, 9, 0, n)).toISOString();

/** Inserts a user with a unique email and username. */
export async function insertUser(users: UserStore, username = `u_${randomUUID().slice(0, 8)}`) {
  const user = { id: randomUUID(), email: `${username}@example.com`, username, passwordHash: '$argon2id$x', createdAt: at(0) };
  await users.insert(user);
  return user;
}

/** An API token record of `userId`, to insert; `overrides` changes any field. */
export const newToken = (userId: string, overrides: Partial<NewToken> = {}): NewToken => ({
  id: randomUUID(),
  kind: 'api',
  userId,
  appId: null,
  name: 'token',
  scopes: ['apps:read'],
  hint: 'rz_abcd',
  digest: randomUUID(),
  createdAt: at(1),
  expiresAt: null,
  allowedCidrs: null,
  ...overrides,
});
