import { randomUUID } from 'node:crypto';
import { auditEvent, OPERATOR_CONTEXT, type RequestContext } from '../audit/events.js';
import type { ChangeFeed } from '../changes/feed.js';
import { type Clock, iso } from '../clock.js';
import { validationFailed } from '../errors.js';
import { isUuid } from '../lib/ids.js';
import { cleanLabel } from '../lib/text.js';
import { generateToken, tokenDigest, tokenHint } from '../lib/token-format.js';
import type { ServiceCredential, ServiceCredentialStore } from './store.js';

/** A new credential: its value, shown once, and what is stored. */
export interface CreatedServiceCredential {
  readonly token: string;
  readonly credential: ServiceCredential;
}

/**
 * The credentials of the platform's services, one per service, managed by the operator (CLI).
 * A service credential may only introspect tokens and read the event stream.
 */
export class ServiceCredentials {
  constructor(
    private readonly store: ServiceCredentialStore,
    private readonly feed: ChangeFeed,
    private readonly clock: Clock,
  ) {}

  /** @throws validation_failed for a blank, long or control-character name. */
  async create(name: string, context: RequestContext = OPERATOR_CONTEXT): Promise<CreatedServiceCredential> {
    const clean = cleanLabel(name, 'name', 100);
    if (typeof clean !== 'string') throw validationFailed([clean]);
    const token = generateToken('service');
    const now = this.clock.now();
    const credential: ServiceCredential = { id: randomUUID(), name: clean, hint: tokenHint(token, 'service'), createdAt: iso(now), revokedAt: null };
    const event = auditEvent({ type: 'service_credential.created', userId: null, subject: { type: 'service_credential', id: credential.id }, details: { name: clean } }, context, now);
    await this.store.insert({ ...credential, digest: tokenDigest(token) }, event);
    return { token, credential };
  }

  list(): Promise<ServiceCredential[]> {
    return this.store.listActive();
  }

  /** Revokes a credential on every instance: its requests and open streams end. False when unknown or already revoked. */
  async revoke(id: string, context: RequestContext = OPERATOR_CONTEXT): Promise<boolean> {
    const now = this.clock.now();
    const event = auditEvent({ type: 'service_credential.revoked', userId: null, subject: { type: 'service_credential', id } }, context, now);
    if (!isUuid(id) || !(await this.store.revoke(id, iso(now), event))) return false;
    await this.feed.committed('service', id);
    return true;
  }
}
