import { randomUUID } from 'node:crypto';
import { iso } from '../clock.js';

/**
 * Every security event type of the audit log (docs/audit-log.md), fixed here so the API filters on them
 * and every recorder spells them alike. docs/audit-log.md says when each is recorded.
 */
export const AUDIT_TYPES = [
  'user.signed_up',
  'user.created',
  'user.deleted',
  'login.succeeded',
  'login.failed',
  'login.password_ok_mfa_pending',
  'mfa.challenge_failed',
  'mfa.recovery_code_used',
  'mfa.locked',
  'mfa.clone_suspected',
  'auth.reauth',
  'mfa.factor_added',
  'mfa.factor_removed',
  'mfa.recovery_codes_generated',
  'mfa.reset_by_operator',
  'session.logged_out',
  'session.revoked',
  'password.changed',
  'password.reset_requested',
  'password.reset',
  'email.verification_sent',
  'email.verified',
  'email.change_requested',
  'email.changed',
  'token.created',
  'token.rotated',
  'token.updated',
  'token.revoked',
  'token.expired',
  'token.idle_revoked',
  'token.refused',
  'token.leaked',
  'token.expiring',
  'app.registered',
  'app.deleted',
  'keys.rotated',
  'mail.failed',
  'service_credential.created',
  'service_credential.revoked',
  'webhook.created',
  'webhook.deleted',
  'webhook.paused',
  'webhook.resumed',
  'client.created',
  'client.disabled',
  'client.enabled',
  'device.requested',
  'device.approved',
  'device.denied',
] as const;

export type AuditType = (typeof AUDIT_TYPES)[number];

/** Who did it: a user through one of their credentials, an anonymous client, the operator (CLI) or the service itself. */
export interface Actor {
  readonly type: 'user' | 'api_token' | 'app_token' | 'anonymous' | 'operator' | 'system';
  /** The user id for a user token, the token id for an API or app token; null for the others. */
  readonly id: string | null;
}

/** What the event is about. */
export interface Subject {
  readonly type: 'user' | 'session' | 'token' | 'app' | 'signing_key' | 'service_credential' | 'webhook' | 'oauth_client' | 'device_request';
  readonly id: string;
}

/** Small facts about an event; never a secret (no token value, digest or password). */
export type Details = Readonly<Record<string, string | number | boolean | null | readonly string[]>>;

/**
 * Who acts and from where: what a route (or the CLI) hands a service so it can record what it does.
 * The CLI has no address, user agent or request id.
 */
export interface RequestContext {
  readonly actor: Actor;
  /** The client address, as rate limits see it (http/client-address.ts); `ip` in the API. */
  readonly address: string | null;
  readonly userAgent: string | null;
  readonly requestId: string | null;
}

/** One recorded event (docs/audit-log.md). */
export interface AuditEvent {
  readonly id: string;
  readonly type: AuditType;
  readonly occurredAt: string;
  /** Whose log it is in; null when it is nobody's. */
  readonly userId: string | null;
  readonly actor: Actor;
  readonly subject: Subject | null;
  readonly address: string | null;
  readonly userAgent: string | null;
  readonly requestId: string | null;
  readonly details: Details;
}

/**
 * What a service says about an event; {@link auditEvent} adds the id, the time and the request.
 * `actor` defaults to the context's (a login names the user it authenticated).
 */
export interface AuditDraft {
  readonly type: AuditType;
  readonly userId: string | null;
  readonly subject: Subject | null;
  readonly details?: Details;
  readonly actor?: Actor;
}

/** The event to record, as of `now`, for a request (or the CLI). */
export function auditEvent(draft: AuditDraft, context: RequestContext, now: number): AuditEvent {
  return {
    id: randomUUID(),
    type: draft.type,
    occurredAt: iso(now),
    userId: draft.userId,
    actor: draft.actor ?? context.actor,
    subject: draft.subject,
    address: context.address,
    userAgent: context.userAgent,
    requestId: context.requestId,
    details: draft.details ?? {},
  };
}

/** A client that presented no credential. */
export const ANONYMOUS: Actor = Object.freeze({ type: 'anonymous', id: null });

/** The operator, acting through the CLI: no address, user agent or request id. */
export const OPERATOR_CONTEXT: RequestContext = Object.freeze({ actor: Object.freeze({ type: 'operator', id: null }), address: null, userAgent: null, requestId: null });

/** The service acting on its own (the first signing key, sweeps). */
export const SYSTEM_CONTEXT: RequestContext = Object.freeze({ actor: Object.freeze({ type: 'system', id: null }), address: null, userAgent: null, requestId: null });

/** The actor behind a user's credential: the user for a user token, the token itself otherwise. */
export const actorOf = (principal: {
  readonly type: 'user' | 'api_token' | 'app_token';
  readonly user: { readonly id: string };
  readonly credentialId: string;
}): Actor => ({ type: principal.type, id: principal.type === 'user' ? principal.user.id : principal.credentialId });
