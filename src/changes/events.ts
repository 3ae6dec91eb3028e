/*
 * What a change means to the platform's services: the events of GET /api/events (docs/platform-services.md).
 * Each is recorded in the change log with the change itself, in the same transaction, so a stream
 * fed from the log, live or resumed, says exactly what was committed.
 */

export interface TokenRevoked {
  readonly type: 'token.revoked';
  readonly data: { readonly token_id: string; readonly token_type: 'api_token' | 'app_token'; readonly user_id: string; readonly app_id?: string };
}

/** A token's scopes were narrowed (the token lifecycle's PATCH records it). */
export interface TokenUpdated {
  readonly type: 'token.updated';
  /** `derivable: false` when derivation was turned off: every child of the token is dead (contract §14.6). */
  readonly data: { readonly token_id: string; readonly scopes: readonly string[]; readonly derivable?: false };
}

export interface SessionRevoked {
  readonly type: 'session.revoked';
  readonly data: { readonly session_id: string; readonly user_id: string };
}

export interface UserDeleted {
  readonly type: 'user.deleted';
  readonly data: { readonly user_id: string };
}

export interface AppDeleted {
  readonly type: 'app.deleted';
  readonly data: { readonly app_id: string; readonly user_id: string };
}

/** Signing keys were rotated: verifiers refetch the JWKS. */
export interface KeysChanged {
  readonly type: 'keys.changed';
  readonly data: Readonly<Record<string, never>>;
}

export type ChangeEvent = TokenRevoked | TokenUpdated | SessionRevoked | UserDeleted | AppDeleted | KeysChanged;

export const EVENT_TYPES: ReadonlySet<string> = new Set<ChangeEvent['type']>([
  'token.revoked',
  'token.updated',
  'session.revoked',
  'user.deleted',
  'app.deleted',
  'keys.changed',
]);

/** The stored form of an event, or null when it is not one of ours (a row written by hand, say). */
export function parseEvent(text: string | null): ChangeEvent | null {
  if (text === null) return null;
  try {
    const value = JSON.parse(text) as { type?: unknown; data?: unknown };
    if (typeof value.type !== 'string' || !EVENT_TYPES.has(value.type) || typeof value.data !== 'object' || value.data === null) return null;
    return value as ChangeEvent;
  } catch {
    return null;
  }
}
