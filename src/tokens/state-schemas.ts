import { Type } from 'typebox';
import { NullableTimestamp } from '../api/schemas.js';
import { TOKEN_STATES } from './list-store.js';

/** What every token list and detail says of where the token is in its life. */
export const EndFields = {
  state: Type.Enum([...TOKEN_STATES], { description: 'active (usable), expired (reached `expires_at`) or revoked (at `revoked_at`).' }),
  revoked_at: { ...NullableTimestamp, description: 'When the token was revoked; null unless `state` is revoked.' },
};

/** The `state` a token list is filtered by. */
export const StateParam = Type.Optional(Type.Enum([...TOKEN_STATES], { description: 'Which tokens: active (the default), expired or revoked.' }));

/** How long ended tokens stay visible (docs/token-lifecycle.md). */
export const ENDED_VISIBLE = 'Expired and revoked tokens stay listed as long as the audit log keeps the event that ended them (AUDIT_RETENTION_DAYS, 365 by default).';
