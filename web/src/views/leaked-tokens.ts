import * as security from '../api-security.js';
import { h } from '../dom.js';
import { formatDateTime, fromNow } from '../format.js';
import { displayHint, meta, timeOf } from './parts.js';

/** How far back the token list shows tokens revoked because they leaked. */
const LEAK_WINDOW_MS = 30 * 24 * 3600 * 1000;
const PAGE = 200;
/** Pages read of each event type: enough for any account, bounded for a very busy one. */
const MAX_PAGES = 3;

/** An API or app token revoked by a leak report, as the token lists show it. */
export interface LeakedToken {
  readonly id: string;
  /** The app of an app token; null for an API token. */
  readonly appId: string | null;
  /** Its name from the events that named it; null when they are older than the log keeps. */
  readonly name: string | null;
  readonly hint: string;
  readonly leakedAt: string;
  readonly byGitHub: boolean;
}

/** Up to MAX_PAGES pages of one event type, newest first, stopping at the first event before `since`. */
async function eventsOf(jwt: string, type: security.AuditType, since = 0): Promise<security.AuditEvent[]> {
  const events: security.AuditEvent[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await security.listAudit(jwt, { type, limit: PAGE, cursor });
    for (const event of result.events) {
      if (Date.parse(event.occurred_at) < since) return events;
      events.push(event);
    }
    if (result.next_cursor === null) break;
    cursor = result.next_cursor;
  }
  return events;
}

/**
 * The name of each token, from the log: its latest rename (`token.updated`), else its creation
 * (`token.created`), else, for a token made by a rotation, the name of the token it replaced
 * (`token.rotated`, which names the new token's id).
 */
async function namesOf(jwt: string): Promise<(id: string) => string | null> {
  const [updated, created, rotated] = await Promise.all((['token.updated', 'token.created', 'token.rotated'] as const).map((type) => eventsOf(jwt, type)));
  const named = new Map<string, string>();
  // Newest first: the first rename seen of a token is its current name, and any rename beats the creation.
  for (const event of [...(updated ?? []), ...(created ?? [])]) {
    const id = event.subject?.id;
    if (id !== undefined && event.details.name !== undefined && !named.has(id)) named.set(id, event.details.name);
  }
  const replaced = new Map<string, string>();
  for (const event of rotated ?? []) {
    if (event.details.new_token_id !== undefined && event.subject !== null) replaced.set(event.details.new_token_id, event.subject.id);
  }
  return (id) => {
    let at: string | undefined = id;
    // Bounded: a rotation chain in the log is finite, but the walk never trusts that.
    for (let step = 0; at !== undefined && step < 100; step++) {
      const name = named.get(at);
      if (name !== undefined) return name;
      at = replaced.get(at);
    }
    return null;
  };
}

/**
 * The user's API tokens (or, with `appTokens`, app tokens) revoked in the last 30 days because
 * they were reported leaked, newest first, from the audit log: the token lists of the API show
 * active tokens only.
 */
export async function leakedTokens(jwt: string, appTokens = false, now = Date.now()): Promise<LeakedToken[]> {
  const kind = appTokens ? 'app_token' : 'api_token';
  const leaks = (await eventsOf(jwt, 'token.leaked', now - LEAK_WINDOW_MS)).filter((e) => e.details.token_type === kind && e.subject?.type === 'token');
  if (leaks.length === 0) return [];
  // An app token is known by its hint and its app: the log names only API tokens.
  const nameOf = appTokens ? () => null : await namesOf(jwt);
  return leaks.map((event) => ({
    id: event.subject?.id ?? '',
    appId: event.details.app_id ?? null,
    name: nameOf(event.subject?.id ?? ''),
    hint: event.details.hint ?? '',
    leakedAt: event.occurred_at,
    byGitHub: event.details.report_format === 'github',
  }));
}

/**
 * A leaked token in a token list: greyed, after the active ones, with when it was reported. An API
 * token is an `item` with its name as a heading; an app token an `app-token` known by its hint.
 */
export function leakedItem(token: LeakedToken): HTMLLIElement {
  const hint = token.hint === '' ? null : h('code', { class: 'hint-code', title: 'The last four characters of the token' }, displayHint(token.hint));
  const app = token.appId !== null;
  return h(
    'li',
    { class: app ? 'app-token item-leaked' : 'item item-leaked', 'data-token': token.id },
    h(
      'div',
      { class: app ? 'app-token-main' : 'item-main' },
      h('div', { class: 'item-title' }, app ? null : h('h3', {}, token.name ?? 'API token'), hint, h('span', { class: 'badge badge-danger' }, 'Revoked: reported leaked')),
      h(
        'dl',
        { class: 'meta' },
        meta('Reported', timeOf(token.leakedAt, `${formatDateTime(token.leakedAt)} (${fromNow(token.leakedAt)})`)),
        meta('Reported by', token.byGitHub ? 'GitHub secret scanning' : 'A leak report (POST /api/tokens/leaked)'),
      ),
      h('p', { class: 'muted small' }, `rz-auth revoked it when it was reported: it no longer works. ${app ? 'Issue the app a new token.' : 'Create a new token for whatever used it.'}`),
    ),
  );
}
