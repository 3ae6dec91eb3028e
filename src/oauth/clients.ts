import type { Kysely } from 'kysely';
import { auditEvent, OPERATOR_CONTEXT, type RequestContext } from '../audit/events.js';
import { recordAudit } from '../audit/store.js';
import { type Clock, iso } from '../clock.js';
import type { Tables } from '../db/tables.js';
import { type FieldError, validationFailed } from '../errors.js';
import type { ScopeCatalogue } from '../scopes/catalogue.js';

/** A public OAuth client (contract §13.3): a label the user sees and a ceiling on scopes, never a credential. */
export interface OAuthClient {
  readonly id: string;
  readonly name: string;
  /** The scopes it may ask for. */
  readonly scopes: readonly string[];
  /** What a request without `scope` asks for. */
  readonly defaultScopes: readonly string[];
  /** The longest expiry of its tokens, in days; null: DEVICE_TOKEN_MAX_DAYS alone. */
  readonly maxDays: number | null;
  readonly createdAt: string | null;
  readonly disabled: boolean;
  readonly builtin: boolean;
}

export const BUILTIN_CLIENT_ID = 'rz-cli';
export const CLIENT_ID = /^[a-z][a-z0-9-]{2,39}$/;

export interface NewClient {
  readonly id: string;
  readonly name: string;
  readonly scopes: readonly string[];
  readonly defaultScopes?: readonly string[] | undefined;
  readonly maxDays?: number | undefined;
}

type Row = Tables['oauth_clients'];
const toClient = (row: Row): OAuthClient => ({
  id: row.id,
  name: row.name,
  scopes: JSON.parse(row.scopes) as string[],
  defaultScopes: JSON.parse(row.default_scopes) as string[],
  maxDays: row.max_days,
  createdAt: row.created_at,
  disabled: row.disabled_at !== null,
  builtin: false,
});

/** The built-in `rz-cli` and the operator's registered clients (`rz-auth clients ...`). */
export class OAuthClients {
  private readonly builtin: OAuthClient;

  constructor(
    private readonly db: Kysely<Tables>,
    private readonly catalogue: ScopeCatalogue,
    private readonly clock: Clock,
  ) {
    // Any scope an API token may carry; none by default, so `rz login` alone reaches GET /api/me only.
    this.builtin = { id: BUILTIN_CLIENT_ID, name: 'rz CLI', scopes: catalogue.allowed('api_token'), defaultScopes: [], maxDays: null, createdAt: null, disabled: false, builtin: true };
  }

  /** The client `id` names, enabled or not; undefined for none. */
  async find(id: string): Promise<OAuthClient | undefined> {
    if (id === BUILTIN_CLIENT_ID) return this.builtin;
    if (!CLIENT_ID.test(id)) return undefined;
    const row = await this.db.selectFrom('oauth_clients').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toClient(row);
  }

  async list(): Promise<OAuthClient[]> {
    const rows = await this.db.selectFrom('oauth_clients').selectAll().orderBy('id').execute();
    return [this.builtin, ...rows.map(toClient)];
  }

  async create(input: NewClient, context: RequestContext = OPERATOR_CONTEXT): Promise<OAuthClient> {
    const errors: FieldError[] = [];
    const name = input.name.trim();
    if (!CLIENT_ID.test(input.id) || input.id === BUILTIN_CLIENT_ID) errors.push({ field: 'id', message: 'must match ^[a-z][a-z0-9-]{2,39}$ and not be rz-cli' });
    if (name.length < 1 || name.length > 60) errors.push({ field: 'name', message: 'must be 1 to 60 characters' });
    const allowed = new Set(this.catalogue.allowed('api_token'));
    const unknown = [...input.scopes, ...(input.defaultScopes ?? [])].filter((s) => !allowed.has(s));
    if (unknown.length > 0) errors.push({ field: 'scopes', message: `unknown or not for API tokens: ${[...new Set(unknown)].join(', ')}` });
    if ((input.defaultScopes ?? []).some((s) => !input.scopes.includes(s))) errors.push({ field: 'default_scopes', message: 'must be among --scopes' });
    if (input.maxDays !== undefined && (!Number.isInteger(input.maxDays) || input.maxDays < 1 || input.maxDays > 36_500)) errors.push({ field: 'max_days', message: 'must be a whole number of days from 1' });
    if (errors.length > 0) throw validationFailed(errors);
    const now = this.clock.now();
    const row: Row = {
      id: input.id,
      name,
      scopes: JSON.stringify([...new Set(input.scopes)].sort()),
      default_scopes: JSON.stringify([...new Set(input.defaultScopes ?? [])].sort()),
      max_days: input.maxDays ?? null,
      created_at: iso(now),
      disabled_at: null,
    };
    await this.db.transaction().execute(async (trx) => {
      const taken = await trx.selectFrom('oauth_clients').select('id').where('id', '=', row.id).executeTakeFirst();
      if (taken) throw validationFailed([{ field: 'id', message: 'is already registered' }]);
      await trx.insertInto('oauth_clients').values(row).execute();
      await recordAudit(trx, auditEvent({ type: 'client.created', userId: null, subject: { type: 'oauth_client', id: row.id }, details: { name } }, context, now));
    });
    return toClient(row);
  }

  /**
   * Disables or enables a registered client; false when there is none by that id. A disabled
   * client's pending requests answer `expired_token` and its new ones `invalid_client`.
   */
  async setDisabled(id: string, disabled: boolean, context: RequestContext = OPERATOR_CONTEXT): Promise<boolean> {
    const now = this.clock.now();
    return this.db.transaction().execute(async (trx) => {
      const changed = await trx
        .updateTable('oauth_clients')
        .set({ disabled_at: disabled ? iso(now) : null })
        .where('id', '=', id)
        .where('disabled_at', disabled ? 'is' : 'is not', null)
        .executeTakeFirst();
      const exists = await trx.selectFrom('oauth_clients').select('id').where('id', '=', id).executeTakeFirst();
      if (Number(changed.numUpdatedRows) > 0) {
        await recordAudit(trx, auditEvent({ type: disabled ? 'client.disabled' : 'client.enabled', userId: null, subject: { type: 'oauth_client', id } }, context, now));
      }
      return exists !== undefined;
    });
  }
}
