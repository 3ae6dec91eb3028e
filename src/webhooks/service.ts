import { randomUUID } from 'node:crypto';
import { AUDIT_TYPES, type AuditType, auditEvent, type RequestContext } from '../audit/events.js';
import { type Clock, iso } from '../clock.js';
import { conflict, type FieldError, notFound, validationFailed } from '../errors.js';
import { isUuid } from '../lib/ids.js';
import { capReached, DEFAULT_CAPS } from '../lib/caps.js';
import { keysetPage, type Page, type PageRequest, parsePage } from '../lib/pages.js';
import { redactEcho } from '../lib/redact.js';
import { cleanText } from '../lib/text.js';
import { isFieldError } from '../tokens/service.js';
import { checkWebhookUrl } from './addresses.js';
import type { Resolve } from './resolution.js';
import { TEST_EVENT_TYPE, testPayload } from './dispatcher.js';
import { newWebhookSecret } from './signature.js';
import type { Delivery, OwnerFilter, WebhookEndpoint, WebhookStore } from './store.js';

/**
 * Test deliveries waiting on one endpoint: each is retried for a day, so without a cap a user could
 * queue them by the thousand against a receiver that never answers.
 */
export const MAX_PENDING_TESTS = 3;
export const MAX_DESCRIPTION = 1000;
/** What an endpoint may subscribe to: every type of the audit log. */
export const WEBHOOK_EVENT_TYPES: readonly AuditType[] = AUDIT_TYPES;

export interface DeliveryPage {
  readonly deliveries: Delivery[];
  readonly nextCursor: string | null;
}

/**
 * A new endpoint as the API's body or the CLI's options give it; its event types are checked here,
 * whoever typed them (field errors name them `event_types`, as both spell it).
 */
export interface NewEndpoint {
  readonly url: string;
  readonly eventTypes: readonly string[];
  readonly description?: string | undefined;
}


function checkEventTypes(types: readonly string[]): AuditType[] | FieldError {
  if (types.length === 0) return { field: 'event_types', message: 'must name at least one event type' };
  const unknown = types.find((t) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(t));
  // Quoted back to whoever typed it (the CLI prints it): a token given as a type is not echoed.
  if (unknown !== undefined) return { field: 'event_types', message: `has an unknown event type: ${redactEcho(unknown, 60)}` };
  if (new Set(types).size !== types.length) return { field: 'event_types', message: 'must not list an event type twice' };
  return types as AuditType[];
}

/** The audit details of an endpoint: where it sends (the origin only: a URL's path may hold a secret) and what. */
const endpointDetails = (endpoint: WebhookEndpoint) => ({ origin: new URL(endpoint.url).origin, event_types: endpoint.eventTypes });

export interface WebhookPolicy {
  /** WEBHOOK_ALLOW_PRIVATE. */
  readonly allowPrivate: boolean;
  /** Injected in tests; dns.lookup otherwise. */
  readonly resolve?: Resolve;
  /**
   * MAX_WEBHOOKS_PER_USER: each endpoint multiplies the deliveries of every event of its owner's.
   * The operator's endpoints (CLI) have no cap.
   */
  readonly maxEndpointsPerUser?: number;
}

/**
 * Rules for webhook endpoints. `owner` is the user acting on their own endpoints, or undefined for
 * the operator (CLI), who sees every endpoint and whose own endpoints receive everyone's events.
 */
export class WebhookService {
  constructor(
    private readonly store: WebhookStore,
    private readonly clock: Clock,
    private readonly policy: WebhookPolicy,
  ) {}

  /**
   * Adds an endpoint of `ownerUserId` (null: the operator's) with a new secret, returned here only.
   * @throws validation_failed naming `url`, `event_types` or `description`; conflict at the cap.
   */
  async create(ownerUserId: string | null, input: NewEndpoint, context: RequestContext): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const eventTypes = checkEventTypes(input.eventTypes);
    const description = input.description === undefined ? null : cleanText(input.description.trim(), 'description', MAX_DESCRIPTION);
    if (isFieldError(eventTypes) || isFieldError(description)) throw validationFailed([eventTypes, description].filter(isFieldError));
    // Last, as it may wait for DNS: a request that is wrong anyway never causes a lookup.
    const url = await checkWebhookUrl(input.url, this.policy);
    const now = this.clock.now();
    const endpoint: WebhookEndpoint = { id: randomUUID(), ownerUserId, url: url.href, description: description || null, eventTypes, createdAt: iso(now) };
    const secret = newWebhookSecret();
    const event = auditEvent({ type: 'webhook.created', userId: ownerUserId, subject: { type: 'webhook', id: endpoint.id }, details: endpointDetails(endpoint) }, context, now);
    const max = this.policy.maxEndpointsPerUser ?? DEFAULT_CAPS.webhooksPerUser;
    if (!(await this.store.insertEndpoint({ ...endpoint, secret }, event, max))) {
      throw capReached('webhooksPerUser', max);
    }
    return { endpoint, secret };
  }

  /** Every endpoint, newest first, never with its secret (the operator's CLI). */
  list(owner: OwnerFilter): Promise<WebhookEndpoint[]> {
    return this.store.listEndpoints(owner);
  }

  /** A page of endpoints, newest first, never with their secrets. */
  async page(owner: OwnerFilter, page: PageRequest): Promise<Page<WebhookEndpoint>> {
    return keysetPage(await this.store.listEndpoints(owner, page), page);
  }

  /** One endpoint; someone else's is not found, exactly like a missing one. */
  async get(owner: OwnerFilter, id: string): Promise<WebhookEndpoint> {
    const endpoint = isUuid(id) ? await this.store.findEndpoint(id, owner) : undefined;
    if (!endpoint) throw notFound();
    return endpoint;
  }

  /** Deletes an endpoint and its deliveries, recording `webhook.deleted` in its owner's log. */
  async delete(owner: OwnerFilter, id: string, context: RequestContext): Promise<void> {
    const now = this.clock.now();
    const audit = (endpoint: WebhookEndpoint) =>
      auditEvent({ type: 'webhook.deleted', userId: endpoint.ownerUserId, subject: { type: 'webhook', id }, details: endpointDetails(endpoint) }, context, now);
    if (!isUuid(id) || !(await this.store.deleteEndpoint(id, owner, audit))) throw notFound();
  }

  /** A page of an endpoint's deliveries, newest first, with their attempts. */
  async deliveries(owner: OwnerFilter, id: string, query: { readonly limit?: string | undefined; readonly cursor?: string | undefined }): Promise<DeliveryPage> {
    const page = parsePage(query);
    const endpoint = await this.get(owner, id);
    const { items: deliveries, nextCursor } = keysetPage(await this.store.listDeliveries(endpoint.id, page.limit + 1, page.after), page);
    return { deliveries, nextCursor };
  }

  /** Queues a `webhook.test` delivery to the endpoint, due at once; 404 once it is deleted, even while this runs. */
  async test(owner: OwnerFilter, id: string): Promise<Delivery> {
    const endpoint = await this.get(owner, id);
    const now = this.clock.now();
    const createdAt = iso(now);
    const delivery = { id: randomUUID(), endpointId: endpoint.id, eventId: null, eventType: TEST_EVENT_TYPE, payload: testPayload(endpoint.id, now), createdAt };
    const queued = await this.store.insertCapped(delivery, MAX_PENDING_TESTS);
    if (queued === 'gone') throw notFound();
    if (queued === 'full') {
      throw conflict(`${MAX_PENDING_TESTS} test deliveries to this endpoint are still pending: wait until one succeeds or is given up.`);
    }
    return { ...delivery, status: 'pending', nextAttemptAt: createdAt, finishedAt: null, attempts: [] };
  }
}
