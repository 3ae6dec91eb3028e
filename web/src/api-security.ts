import type { Answer, AuditEvent, AuditType, operations, RequestBody } from '../../types/api.js';
import { call, everyPage } from './api.js';

/*
 * The security side of the API as the page uses it: the user's audit log (GET /api/audit) and their
 * webhook endpoints (/api/webhooks, contract §9). Same rules as api.ts: the user token travels in
 * the Authorization header only; every type is the document's.
 */

export type { AuditEvent, AuditType };
/** Who did something: a user through one of their credentials, nobody, the operator or rz-auth itself. */
export type AuditActor = AuditEvent['actor'];
/** Small facts about an event, never a secret; every field optional (docs/audit-log.md). */
export type AuditDetails = AuditEvent['details'];
export type AuditPage = Answer<'listAuditEvents'>;
export type AuditQuery = NonNullable<operations['listAuditEvents']['parameters']['query']>;

/** A page of the user's own events, newest first. */
export const listAudit = (jwt: string, { limit, ...query }: Omit<AuditQuery, 'limit'> & { readonly limit?: number } = {}) =>
  call('get', '/api/audit', jwt, { query: { ...query, ...(limit === undefined ? {} : { limit: String(limit) }) } });

/** A webhook endpoint of the user; its secret is only in the creation response. */
export type Webhook = Answer<'listWebhooks'>['webhooks'][number];
/** With its `whsec_…` secret: shown once. */
export type CreatedWebhook = Answer<'createWebhook', 201>;
export type Delivery = Answer<'listWebhookDeliveries'>['deliveries'][number];
export type DeliveryAttempt = Delivery['attempts'][number];

export const listWebhooks = async (jwt: string) => ({ webhooks: await everyPage((query) => call('get', '/api/webhooks', jwt, { query }), (page) => page.webhooks) });
export const createWebhook = (jwt: string, body: RequestBody<'createWebhook'>) => call('post', '/api/webhooks', jwt, { body });
export const deleteWebhook = (jwt: string, id: string) => call('delete', '/api/webhooks/{id}', jwt, { path: { id } });
export const listDeliveries = (jwt: string, id: string, limit: number) =>
  call('get', '/api/webhooks/{id}/deliveries', jwt, { path: { id }, query: { limit: String(limit) } });
export const sendTest = (jwt: string, id: string) => call('post', '/api/webhooks/{id}/test', jwt, { path: { id } });
/** The event types an endpoint may subscribe to. */
export const webhookEventTypes = (jwt: string) => call('get', '/api/webhooks/event-types', jwt, {});
