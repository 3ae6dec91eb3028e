import type { FieldError } from '../errors.js';
import { SCOPE_DESCRIPTIONS, SCOPES } from '../tokens/scopes.js';
import type { PlatformScope, ScopeTokenType } from './file.js';

/** A scope as `GET /api/scopes` lists it. */
export interface CatalogueEntry {
  readonly name: string;
  readonly description: string;
  readonly tokenTypes: readonly ScopeTokenType[];
  readonly builtin: boolean;
}

/**
 * Every scope a token can carry: the built-in ones, which grant rz-auth's own routes to API tokens,
 * and the platform's, which rz-auth only stores and shows (the platform's services check them).
 */
export class ScopeCatalogue {
  readonly entries: readonly CatalogueEntry[];
  private readonly byType: Readonly<Record<ScopeTokenType, readonly string[]>>;
  private readonly sets: Readonly<Record<ScopeTokenType, ReadonlySet<string>>>;

  constructor(platform: readonly PlatformScope[]) {
    const builtin = SCOPES.map((name): CatalogueEntry => ({ name, description: SCOPE_DESCRIPTIONS[name], tokenTypes: ['api_token'], builtin: true }));
    this.entries = [...builtin, ...platform.map((s) => ({ ...s, builtin: false }))];
    const names = (type: ScopeTokenType) => this.entries.filter((e) => e.tokenTypes.includes(type)).map((e) => e.name);
    this.byType = { api_token: names('api_token'), app_token: names('app_token') };
    this.sets = { api_token: new Set(this.byType.api_token), app_token: new Set(this.byType.app_token) };
  }

  /** The names a token of `type` may be given, built-in first, then in the file's order. */
  allowed(type: ScopeTokenType): readonly string[] {
    return this.byType[type];
  }

  /**
   * A refusal of `scopes` (or of one item, `scopes.N`) reworded when a scope asked for is one of the
   * catalogue's, for the other token type only: the caller meant it for the other type.
   */
  explainRefusal(field: string, value: unknown, message: string): string | undefined {
    const items = field === 'scopes' && message.startsWith('must have at most') && Array.isArray(value) ? value : /^scopes\.\d+$/.test(field) ? [value] : [];
    const entry = this.entries.find((e) => e.tokenTypes.length === 1 && items.includes(e.name));
    if (!entry) return undefined;
    const only = entry.tokenTypes[0] === 'app_token' ? 'app tokens' : 'API tokens';
    return `${entry.name} is a scope for ${only} only: remove it, or ask for it on the other kind of token (GET /api/scopes lists each scope's token types)`;
  }

  /**
   * What is wrong with the scopes asked for a new token of `type` (nothing when it may carry them
   * all). Route schemas refuse the same; this keeps the rule true for every caller of a service.
   */
  check(type: ScopeTokenType, requested: readonly string[] | undefined): FieldError[] {
    if (requested === undefined) return [];
    if (new Set(requested).size !== requested.length) return [{ field: 'scopes', message: 'must not list an item twice' }];
    const allowed = this.sets[type];
    return requested.every((scope) => allowed.has(scope)) ? [] : [{ field: 'scopes', message: 'is not one of the allowed values' }];
  }
}
