import { call } from './api.js';

/*
 * The security side of the API as the page uses it: the user's audit log (GET /api/audit) and their
 * webhook endpoints (/api/webhooks, contract §9). Same rules as api.ts: the user token travels in
 * the Authorization header only.
 */

/** Who did something: a user through one of their credentials, nobody, the operator or rz-auth itself. */
export interface AuditActor {
  readonly type: 'user' | 'api_token' | 'app_token' | 'anonymous' | 'operator' | 'system';
  readonly id: string | null;
}

/** Small facts about an event, never a secret; every field optional (docs/audit-log.md). */
export interface AuditDetails {
  readonly token_type?: 'api_token' | 'app_token' | 'service_credential';
  readonly app_id?: string;
  readonly name?: string;
  readonly scopes?: readonly string[];
  readonly expires_at?: string | null;
  readonly immediate?: boolean;
  readonly hint?: string;
  readonly report_format?: 'list' | 'github';
  readonly allowed_cidrs?: readonly string[];
  readonly reason?: string;
  readonly sessions_ended?: number;
  readonly new_token_id?: string;
  readonly grace_seconds?: number;
  readonly idle_days?: number;
  readonly refusals?: number;
  readonly last_refused_at?: string;
  readonly days?: number;
  /** A webhook endpoint's scheme, host and port. */
  readonly origin?: string;
  readonly event_types?: readonly string[];
  /** A webhook endpoint paused: its failed attempts in a row, and when it is probed. */
  readonly consecutive_failures?: number;
  readonly paused_until?: string | null;
  /** A leak report in GitHub's format whose signature checked out. */
  readonly verified?: boolean;
}

/** One event of the user's audit log. */
export interface AuditEvent {
  readonly id: string;
  readonly type: string;
  readonly occurred_at: string;
  readonly actor: AuditActor;
  readonly subject: { readonly type: string; readonly id: string } | null;
  readonly ip: string | null;
  readonly user_agent: string | null;
  readonly request_id: string | null;
  readonly details: AuditDetails;
}

export interface AuditPage {
  readonly events: readonly AuditEvent[];
  /** Null on the last page. */
  readonly next_cursor: string | null;
}

export interface AuditQuery {
  readonly type?: string | undefined;
  readonly cursor?: string | undefined;
  readonly limit?: number | undefined;
}

/** A page of the user's own events, newest first. */
export function listAudit(jwt: string, query: AuditQuery = {}): Promise<AuditPage> {
  const params = new URLSearchParams();
  if (query.limit !== undefined) params.set('limit', String(query.limit));
  if (query.type !== undefined) params.set('type', query.type);
  if (query.cursor !== undefined) params.set('cursor', query.cursor);
  const search = params.toString();
  return call<AuditPage>('GET', `/api/audit${search === '' ? '' : `?${search}`}`, jwt);
}

/** A webhook endpoint of the user; its secret is only in the creation response. */
export interface Webhook {
  readonly id: string;
  readonly url: string;
  readonly description: string | null;
  readonly event_types: readonly string[];
  readonly created_at: string;
}

export interface CreatedWebhook extends Webhook {
  /** `whsec_…`: shown once. */
  readonly secret: string;
}

export interface DeliveryAttempt {
  readonly attempted_at: string;
  readonly status_code: number | null;
  readonly error: string | null;
  readonly duration_ms: number;
}

export interface Delivery {
  readonly id: string;
  /** Null for a test delivery. */
  readonly event_id: string | null;
  readonly event_type: string;
  readonly status: 'pending' | 'succeeded' | 'failed';
  readonly created_at: string;
  readonly next_attempt_at: string | null;
  readonly finished_at: string | null;
  readonly attempts: readonly DeliveryAttempt[];
}

const id = (value: string) => encodeURIComponent(value);

export const listWebhooks = (jwt: string) => call<{ webhooks: Webhook[] }>('GET', '/api/webhooks', jwt);
export const createWebhook = (jwt: string, input: { url: string; event_types: string[]; description?: string }) =>
  call<CreatedWebhook>('POST', '/api/webhooks', jwt, input);
export const deleteWebhook = (jwt: string, webhookId: string) => call<undefined>('DELETE', `/api/webhooks/${id(webhookId)}`, jwt);
export const listDeliveries = (jwt: string, webhookId: string, limit: number) =>
  call<{ deliveries: Delivery[]; next_cursor: string | null }>('GET', `/api/webhooks/${id(webhookId)}/deliveries?limit=${limit}`, jwt);
export const sendTest = (jwt: string, webhookId: string) => call<{ delivery: Delivery }>('POST', `/api/webhooks/${id(webhookId)}/test`, jwt);
/** The event types an endpoint may subscribe to. */
export const webhookEventTypes = (jwt: string) => call<{ event_types: string[] }>('GET', '/api/webhooks/event-types', jwt);
