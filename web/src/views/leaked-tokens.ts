import * as security from '../api-security.js';
import { h } from '../dom.js';
import { formatDateTime, fromNow } from '../format.js';
import { displayHint, meta, timeOf } from './parts.js';

/** How far back the token list shows tokens revoked because they leaked. */
const LEAK_WINDOW_MS = 30 * 24 * 3600 * 1000;
const PAGE = 200;
/** Pages read of each event type: enough for any account, bounded for a very busy one. */
const MAX_PAGES = 3;

/** An API token revoked by a leak report, as the token list shows it. */
export interface LeakedToken {
  readonly id: string;
  /** Its name from the events that named it; null when they are older than the log keeps. */
  readonly name: string | null;
  readonly hint: string;
  readonly leakedAt: string;
  readonly byGitHub: boolean;
}

/** Up to MAX_PAGES pages of one event type, newest first, stopping at the first event before `since`. */
async function eventsOf(jwt: string, type: string, since = 0): Promise<security.AuditEvent[]> {
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
  const [updated, created, rotated] = await Promise.all(['token.updated', 'token.created', 'token.rotated'].map((type) => eventsOf(jwt, type)));
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
 * The user's API tokens revoked in the last 30 days because they were reported leaked, newest
 * first, from the audit log: GET /api/tokens lists active tokens only.
 */
export async function leakedTokens(jwt: string, now = Date.now()): Promise<LeakedToken[]> {
  const leaks = (await eventsOf(jwt, 'token.leaked', now - LEAK_WINDOW_MS)).filter((e) => e.details.token_type === 'api_token' && e.subject?.type === 'token');
  if (leaks.length === 0) return [];
  const nameOf = await namesOf(jwt);
  return leaks.map((event) => ({
    id: event.subject?.id ?? '',
    name: nameOf(event.subject?.id ?? ''),
    hint: event.details.hint ?? '',
    leakedAt: event.occurred_at,
    byGitHub: event.details.report_format === 'github',
  }));
}

/** A leaked token in the token list: greyed, after the active ones, with when it was reported. */
export function leakedItem(token: LeakedToken): HTMLLIElement {
  return h(
    'li',
    { class: 'item item-leaked', 'data-token': token.id },
    h(
      'div',
      { class: 'item-main' },
      h(
        'div',
        { class: 'item-title' },
        h('h3', {}, token.name ?? 'API token'),
        token.hint === '' ? null : h('code', { class: 'hint-code', title: 'The last four characters of the token' }, displayHint(token.hint)),
        h('span', { class: 'badge badge-danger' }, 'Revoked: reported leaked'),
      ),
      h(
        'dl',
        { class: 'meta' },
        meta('Reported', timeOf(token.leakedAt, `${formatDateTime(token.leakedAt)} (${fromNow(token.leakedAt)})`)),
        meta('Reported by', token.byGitHub ? 'GitHub secret scanning' : 'A leak report (POST /api/tokens/leaked)'),
      ),
      h('p', { class: 'muted small' }, 'rz-auth revoked it when it was reported: it no longer works. Create a new token for whatever used it.'),
    ),
  );
}
