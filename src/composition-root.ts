import type { Redis } from 'ioredis';
import { AppService } from './apps/service.js';
import { RefusalRecorder } from './audit/refusals.js';
import { Background } from './background.js';
import { AuditLog } from './audit/service.js';
import { AuditStore } from './audit/store.js';
import { AppStore } from './apps/store.js';
import { Authenticator } from './auth/authenticator.js';
import { UserTokens } from './auth/jwt.js';
import { Introspector } from './auth/introspection.js';
import { AccountService } from './account/service.js';
import { type EmailParts, emailParts } from './account/email-wiring.js';
import { createMfa, type Mfa } from './account/mfa/wire.js';
import { ChangeFeed } from './changes/feed.js';
import { changeSource } from './changes/sources.js';
import { ChangeStore } from './changes/store.js';
import { pollingWatched } from './changes/watch.js';
import { type Clock, systemClock } from './clock.js';
import type { Config } from './config.js';
import type { MailSettings } from './mail/config.js';
import { createMailDelivery, type MailDelivery, type MailParts, NO_MAIL_DELIVERY } from './mail/runner.js';
import { MailQueue } from './mail/queue.js';
import { type Database, openDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { resealAll } from './db/sealed-columns.js';
import { EventHub } from './events/hub.js';
import { KeyRing } from './keys/service.js';
import { RateLimiter } from './ratelimit/limiter.js';
import { checkDatabase, connectRedis, redisReady } from './ratelimit/redis.js';
import { KeyStore } from './keys/store.js';
import { GitHubKeys } from './tokens/leaks/github-keys.js';
import { LeakResponse } from './tokens/leaks/service.js';
import { LastUseRecorder } from './lib/last-use.js';
import { Periodic } from './lib/periodic.js';
import { Sealer } from './lib/sealed.js';
import { Maintenance } from './maintenance/runner.js';
import { createMetrics, instruments, type Metrics, observeServices } from './observability/metrics/wire.js';
import { expiredSessions, MAINTENANCE_INTERVAL_MS, oldAuditEvents, oldChanges, oldDeliveries, oldMails } from './maintenance/sweeps.js';
import { ScopeCatalogue } from './scopes/catalogue.js';
import { ServiceCredentials } from './service-credentials/service.js';
import { ServiceCredentialStore } from './service-credentials/store.js';
import { AccountSecurity } from './account/security-service.js';
import { SessionStore } from './account/session-store.js';
import { TokenLifecycle } from './tokens/lifecycle.js';
import { TokenLifecycleStore } from './tokens/lifecycle-store.js';
import { TokenService } from './tokens/service.js';
import { endedGraces, endedLifetimes, expiringTokens, idleTokens } from './tokens/sweeps.js';
import { TokenStore } from './tokens/store.js';
import { bothLoops, checkDerivationKeys, createDerived, DerivationKeys } from './tokens/derived/wire.js';
import { UsageRecorder } from './tokens/usage.js';
import { PasswordHasher } from './account/password-hasher.js';
import { loadBlocklist } from './account/password-policy.js';
import { UserService } from './account/user-service.js';
import { UserStore } from './account/user-store.js';
import { createWebhooks, type WebhookDelivery } from './webhooks/runner.js';
import { createDeviceParts, type DeviceParts } from './oauth/wiring.js';
import type { WebhookService } from './webhooks/service.js';
import { NO_TRACING, type Tracing } from './observability/tracing/tracing.js';
import type { Infrastructure, ServiceOptions } from './service-options.js';

export type { ServiceOptions };

/**
 * Everything the HTTP layer and the CLI call, built once per process from the configuration by
 * {@link createServices}: this module is the composition root, the one place that constructs the
 * stores, services and background loops and hands each its dependencies.
 */
export interface Services {
  readonly config: Config;
  readonly clock: Clock;
  readonly database: Database;
  readonly users: UserService;
  readonly accounts: AccountService;
  readonly mfa: Mfa; // second factors and the login's second step (docs/mfa.md)
  /** The signed-in user's password, sessions and account deletion. */
  readonly accountSecurity: AccountSecurity;
  readonly email: EmailParts; // verification, password reset, email change, notices, the worker's link minter (docs/email.md)
  readonly tokens: TokenService;
  /** Token detail, narrowing, rotation and an app's tokens (docs/token-lifecycle.md). */
  readonly lifecycle: TokenLifecycle;
  readonly apps: AppService;
  /** The audit log: users read their own events, the operator everyone's (CLI). */
  readonly audit: AuditStore;
  readonly auditLog: AuditLog;
  /** Revokes reported leaked tokens (POST /api/tokens/leaked). */
  readonly leaks: LeakResponse;
  /** Counts requests refused by a token's allow-list; writes `token.refused` in the background. */
  readonly refusals: RefusalRecorder;
  /** Every scope a token can carry: the built-in ones and the platform's (SCOPES_FILE). */
  readonly scopes: ScopeCatalogue;
  /** The platform services' credentials (`rzs_`), managed with the CLI. */
  readonly serviceCredentials: ServiceCredentials;
  readonly keys: KeyRing;
  readonly authenticator: Authenticator;
  /** RFC 7662 answers for the platform's services, from {@link authenticator}. */
  readonly introspector: Introspector;
  readonly feed: ChangeFeed;
  /** The event streams of the platform's services (GET /api/events), fed by {@link feed}. */
  readonly events: EventHub;
  /** Every background loop, in one place: the server starts them, {@link close} stops them, the CLI never starts them. */
  readonly background: Background;
  /** Periodic clean-ups, one of the {@link background} loops; tests run a round with `runOnce()`. */
  readonly maintenance: Maintenance;
  /** Webhook endpoints: users' own (API) and the operator's (CLI). */
  readonly webhooks: WebhookService;
  /** Dispatching and sending webhooks, one of the {@link background} loops; tests run a round with `runOnce()`. */
  readonly webhookDelivery: WebhookDelivery;
  readonly rateLimiter: RateLimiter;
  /** The shared Redis connection, when REDIS_URL is set. */
  readonly redis: Redis | null;
  /** Prometheus series, when METRICS_ADDR is set (docs/operations.md). */
  readonly metrics: Metrics | null;
  readonly tracing: Tracing; // spans of requests, password checks, webhooks (docs/operations.md)
  readonly mail: MailSettings | null; // SMTP_URL, MAIL_FROM, PUBLIC_URL; null when mail is off: nothing is enqueued or sent
  /** Sending the mail outbox, one of the {@link background} loops (tests run a round with `runOnce()`); null when mail is off. */
  readonly mailDelivery: MailDelivery | null;
  /** The mail outbox as the operator reads it (`rz-auth mail list`). */
  readonly mailOutbox: MailQueue;
  readonly device: DeviceParts; // CLI login by device authorization: clients, requests, approval, self-revocation (docs/device-flow.md)
  readonly mailCount: MailParts['deliveries']; // rz_mail_deliveries_total, to which a delivery child's outcomes are added (src/mail/supervisor.ts)
  /** Flushes pending writes and closes connections. */
  close(): Promise<void>;
}

/** Opens the store, runs migrations, loads keys and wires the services together. */
export async function createServices(config: Config, options: ServiceOptions = {}): Promise<Services> {
  const clock = options.clock ?? systemClock;
  const onError = options.onError ?? (() => {});
  const database = await openDatabase(config.database);
  const redis = config.redisUrl ? await connectRedis(config.redisUrl, (error) => onError(error, 'redis')) : null;
  try {
    await migrateToLatest(database.db);
    // Before anything reads a secret: a key that opens none of them refuses the start here.
    await resealAll(database.db, new Sealer(config.keyEncryption));
    await checkDerivationKeys(database.db, new DerivationKeys(config.derived.kek));
    // Start with shared counters if Redis comes up in time; otherwise run degraded (see RateLimiter).
    if (redis && !(await redisReady(redis, 5000))) onError(new Error(`Redis at REDIS_URL is not reachable yet`), 'redis');
    else if (redis) await checkDatabase(redis);
    return await wire(config, { database, redis, clock, onError, requireFeed: options.requireFeed ?? false, tracing: options.tracing ?? NO_TRACING, mailCount: options.mailCount ?? null });
  } catch (error) {
    redis?.disconnect();
    await database.close();
    throw error;
  }
}

async function wire(config: Config, { database, redis, clock, onError, requireFeed, tracing, mailCount }: Infrastructure): Promise<Services> {
  const { db } = database;
  const metrics = config.metrics ? createMetrics() : null;
  const { counts, propagation } = instruments(metrics);
  const sealer = new Sealer(config.keyEncryption);
  const derived = createDerived(db, config.derived, clock, config.usageFlushMs, onError);
  const scopes = new ScopeCatalogue(config.scopes);
  const tokenStore = new TokenStore(db);
  const sessionStore = new SessionStore(db);
  const userStore = new UserStore(db);
  const changeStore = new ChangeStore(db);
  const audit = new AuditStore(db);
  const feedError = (error: unknown) => onError(error, 'change feed');
  const feed = new ChangeFeed(changeStore, changeSource(database.dataVersion, changeStore, redis, config.redisPrefix), feedError, propagation);
  if (!(await feed.start()) && requireFeed) {
    throw new Error('Redis at REDIS_URL is not reachable, so running instances could not be told of a change: nothing was done');
  }
  // Changes whose announcement was lost are still in the log: every instance reads it this often.
  const polling = new Periodic(config.changes.pollMs, () => feed.poll(), feedError);

  // Tokens signed by a retired key stay verifiable for one token lifetime plus a minute of skew.
  const keys = new KeyRing(new KeyStore(db, sealer), feed, clock, (config.jwt.ttlSeconds + 60) * 1000);
  await keys.load();
  const userTokens = new UserTokens(keys, config.jwt);

  const { passwords } = config;
  const hasher = await PasswordHasher.create(passwords.argon2, passwords.hashConcurrency, passwords.hashQueueLimit, { timing: counts?.hashes ?? null, tracing });
  const usage = new UsageRecorder(tokenStore, config.usageFlushMs, (error) => onError(error, 'last-used flush'));
  const sessionUsage = new LastUseRecorder((uses) => sessionStore.recordUsage(uses), config.usageFlushMs, (error) => onError(error, 'session last-used flush'));
  const refusals = new RefusalRecorder((events) => audit.record(events), (error) => onError(error, 'token refusals'));

  const users = new UserService(userStore, hasher, feed, clock, { minLength: passwords.minLength, blocklist: loadBlocklist() }, counts?.tokens ?? null);
  const email = emailParts(db, config.mail !== null, config.accountEmail, { users, hasher, feed, clock, onError });
  const serviceStore = new ServiceCredentialStore(db);
  const authenticator = new Authenticator({ tokens: tokenStore, services: serviceStore, sessions: sessionStore, users: userStore, userTokens, usage, sessionUsage, refusals, clock, derived: derived.authenticator });
  feed.subscribe(async (change) => {
    try {
      // New keys first, then drop cached verifications, so nothing is re-cached under the old keys.
      if (change.kind === 'keys' || change.kind === 'reset') await keys.reload();
    } finally {
      // Even when the keys could not be re-read: what the change made stale must go.
      authenticator.forget(change);
    }
  });
  const events = new EventHub(feed, changeStore, config.events, propagation);
  const lifecycleStore = new TokenLifecycleStore(db);
  const mfa = await createMfa({ db, config: config.mfa, users: userStore, audit, clock, hasher, sessions: sessionStore, userTokens, feed, notice: email.mfaNotice, count: counts?.mfa });
  const device = createDeviceParts({ db, config, clock, scopes, users: userStore, requirement: mfa.requirement, tokens: tokenStore, feed, metrics, notice: email.deviceApproved });
  const webhooks = createWebhooks(db, clock, { ...config.webhooks, maxEndpointsPerUser: config.caps.webhooksPerUser }, onError, sealer, { deliveries: counts?.deliveries ?? null, tracing });
  // Ended tokens stay listed as long as the audit log keeps the event that ended them.
  const history = { endedVisibleMs: config.auditRetentionMs };
  // Mail off: no loop, no gauge, nothing reads or writes the outbox (§11.2).
  const mail = config.mail ? createMailDelivery(db, clock, config.mail, { minter: email.links, deliveries: counts?.mails ?? mailCount, onError }) : null;
  const maintenance = new Maintenance(
    [
      expiredSessions(sessionStore),
      oldChanges(changeStore, config.changes.retentionMs),
      endedGraces(lifecycleStore, feed, counts?.tokens),
      endedLifetimes(lifecycleStore, feed, counts?.tokens),
      idleTokens(lifecycleStore, usage, feed, config.tokens, counts?.tokens),
      expiringTokens(lifecycleStore),
      oldAuditEvents(audit, config.auditRetentionMs),
      oldDeliveries(webhooks.store),
      ...(mail ? [oldMails(mail.queue), ...email.sweeps] : []),
      ...mfa.sweeps, device.sweep,
    ],
    clock,
    MAINTENANCE_INTERVAL_MS,
    onError,
  );
  const background = new Background({ changePolling: propagation ? pollingWatched(polling, feed) : polling, tokenUsage: bothLoops(usage, derived.seen), sessionUsage, refusals, maintenance, webhookDelivery: webhooks.delivery, mailDelivery: mail?.delivery ?? NO_MAIL_DELIVERY });
  if (metrics) observeServices(metrics, { database, redis, hasher, keys, feed, events, mailPending: mail ? (cap) => mail.queue.pending(cap) : null });

  return {
    config, clock, database, users, mfa, device,
    accounts: new AccountService({ users, userStore, sessions: sessionStore, hasher, userTokens, feed, clock, signupEnabled: config.signupEnabled, audit, signupMail: email.signupMail, secondFactor: mfa.login }),
    email,
    accountSecurity: new AccountSecurity({ sessions: sessionStore, userStore, users, hasher, usage: sessionUsage, feed, clock, passwordChanged: email.passwordChanged }),
    tokens: new TokenService(tokenStore, usage, feed, clock, scopes, config.tokens, config.caps, history, counts?.tokens, derived.keys),
    lifecycle: new TokenLifecycle(lifecycleStore, usage, feed, clock, config.tokens, history, counts?.tokens, derived.keys),
    apps: new AppService(new AppStore(db), feed, clock, scopes, config.tokens, config.caps, counts?.tokens, derived.keys),
    audit,
    auditLog: new AuditLog(audit),
    leaks: new LeakResponse({ tokens: tokenStore, services: serviceStore, feed, clock, github: new GitHubKeys({ url: config.leaks.githubKeysUrl, clock, onError }), counts: counts?.tokens, notice: email.tokenLeaked }),
    refusals,
    scopes,
    serviceCredentials: new ServiceCredentials(serviceStore, feed, clock),
    keys, authenticator,
    introspector: new Introspector(authenticator, config.jwt.issuer),
    feed, events, background, maintenance,
    webhooks: webhooks.service,
    webhookDelivery: webhooks.delivery,
    rateLimiter: new RateLimiter(config.rateLimits, redis, config.redisPrefix),
    redis, metrics, tracing,
    mail: config.mail, mailDelivery: mail?.delivery ?? null, mailCount: counts?.mails ?? null,
    mailOutbox: mail?.queue ?? new MailQueue(db),
    async close() {
      events.stop();
      await background.stop();
      await redis?.quit().catch(() => redis.disconnect());
      await database.close();
    },
  };
}
