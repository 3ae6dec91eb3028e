import { Type } from 'typebox';
import type { FieldError } from '../../errors.js';
import type { NewToken } from '../store.js';
import type { DerivationKeys } from './keys.js';

/*
 * Derivable parents (contract §14.3): `derivable: true` at creation or rotation, and `false` on
 * PATCH. The derivation key is computed while the server holds the new value, sealed, and stored
 * with the token in the same insert.
 */

/** The `derivable` member of POST /api/tokens, POST /api/apps/{id}/tokens and POST /api/tokens/{id}/rotate. */
export const DerivableRequest = Type.Optional(
  Type.Boolean({
    description:
      'True lets the holder derive restricted `rzd_` children from the value offline (docs/derived-tokens.md); default false. Needs DERIVE_KEK on the server (400 naming `derivable` without it). On rotation, only the new token is affected.',
  }),
);

/** The `derivable` member of PATCH /api/tokens/{id}: only `false` (a narrowing) is accepted. */
export const DerivableUpdate = Type.Optional(Type.Boolean({ description: 'false stops derivation: every child of the token stops working at once. true on an existing token is a widening (400).' }));

/** The fields a token shows of its children (GET /api/tokens, GET /api/tokens/{id}). */
export const derivedFields = {
  derivable: Type.Boolean({ description: 'Whether `rzd_` children can be derived from it.' }),
  children_revoked_before: Type.Union([Type.String({ format: 'date-time', maxLength: 64 }), Type.Null()], { description: 'Children issued before this no longer work (revoke-all); null when never set.' }),
  children_seen: Type.Integer({ format: 'int32', minimum: 0, maximum: 2_147_483_647, description: 'How many distinct children were seen in use.' }),
};

/** A token's {@link derivedFields}. */
export const derivedSummary = (t: { readonly derivable?: boolean; readonly childrenRevokedBefore?: string | null; readonly childrenSeen?: number }) => ({
  derivable: t.derivable ?? false,
  children_revoked_before: t.childrenRevokedBefore ?? null,
  children_seen: t.childrenSeen ?? 0,
});

/** What is wrong with asking for a derivable token here, if anything. */
export function derivableError(asked: boolean | undefined, keys: DerivationKeys | null): FieldError | undefined {
  if (asked !== true || keys?.enabled) return undefined;
  return { field: 'derivable', message: 'derived tokens are off on this server (no DERIVE_KEK)' };
}

/** `minted` with its derivation key sealed beside it when `asked`. */
export function armed<T extends { readonly value: string; readonly record: NewToken }>(minted: T, asked: boolean | undefined, keys: DerivationKeys | null): T {
  if (asked !== true || !keys?.enabled) return minted;
  return { ...minted, record: { ...minted.record, derivation: keys.arm(minted.record.id, minted.value) } };
}

/** PATCH's `derivable`: false turns derivation off (a narrowing); true on a token that is not derivable is a widening. */
export function derivableChange(current: { readonly derivable?: boolean }, asked: boolean | undefined): false | undefined | FieldError {
  if (asked === undefined || (asked === current.derivable)) return undefined;
  return asked ? { field: 'derivable', message: 'cannot be turned on for an existing token: rotate it with derivable: true instead' } : false;
}

/** `auth.derived` of GET /api/me for a child (contract §14.6). */
export const MeDerived = Type.Object(
  {
    child_id: Type.String({ format: 'uuid', maxLength: 36, description: "The child's id: every attenuation of it shares it." }),
    labels: Type.Array(Type.String({ maxLength: 400 }), { maxItems: 16, description: 'The `label` caveats in order (the lineage).' }),
    iat: Type.String({ format: 'date-time', maxLength: 64, description: 'When the child was derived (its first `iat`).' }),
    aud: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 20, description: 'The effective audience; absent without an `aud` caveat.' })),
  },
  { additionalProperties: false, description: 'Derived (`rzd_`) children only.' },
);
