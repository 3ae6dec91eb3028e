import * as security from '../api-security.js';
import { describeActor, describeEvent, describeSubject, EVENT_TYPES, isAuditType } from '../audit-text.js';
import { focusHeading, h, replace, uid } from '../dom.js';
import { describeError, formatDateTime, fromNow } from '../format.js';
import { authed, SessionEnded } from '../session.js';
import { listState, meta, pageHead, timeOf } from './parts.js';
import type { View } from './view.js';

const PAGE_SIZE = 50;

/** One event as a list item: what happened, when, who, from where, and what it was about. */
function eventItem(event: security.AuditEvent, userId: string): HTMLLIElement {
  const subject = describeSubject(event);
  const { ip: address } = event;
  return h(
    'li',
    { class: 'item event', 'data-type': event.type },
    h(
      'div',
      { class: 'item-main' },
      h('div', { class: 'item-title' }, h('h3', {}, describeEvent(event)), h('code', { class: 'event-type' }, event.type)),
      h(
        'dl',
        { class: 'meta' },
        meta('When', timeOf(event.occurred_at, `${formatDateTime(event.occurred_at)} (${fromNow(event.occurred_at)})`)),
        meta('By', describeActor(event.actor, userId)),
        meta('IP address', address ?? 'None'),
        meta('Browser or client', h('span', { class: 'user-agent' }, event.user_agent ?? 'None')),
        subject === null ? null : meta('About', h('code', { class: 'break' }, subject)),
        event.request_id === null ? null : meta('Request id', h('code', { class: 'break' }, event.request_id)),
      ),
    ),
  );
}

/**
 * The Security log screen: the signed-in user's audit events (GET /api/audit), newest first,
 * filtered by type, the next page appended by its cursor.
 */
export function securityLogView(userId: string): View {
  const heading = h('h1', {}, 'Security log');
  const listHeading = h('h2', { id: uid('log-heading'), tabindex: -1 }, 'Events');
  const filterId = uid('log-type');
  const filter = h(
    'select',
    { id: filterId, name: 'type' },
    h('option', { value: '' }, 'All events'),
    ...EVENT_TYPES.map(([type, label]) => h('option', { value: type }, label)),
  );
  const refreshButton = h('button', { type: 'button', class: 'button' }, 'Refresh');
  const list = h('div', { class: 'list', 'aria-busy': 'true' });
  const status = h('p', { class: 'muted small', role: 'status' });
  const more = h('button', { type: 'button', class: 'button', hidden: true }, 'Load more');
  let cursor: string | null = null;
  let shown = 0;
  // A reload started while an earlier one is on its way wins: a stale page is dropped.
  let generation = 0;

  const type = () => (isAuditType(filter.value) ? filter.value : undefined);
  const counted = () => {
    status.textContent = `Showing ${shown} ${shown === 1 ? 'event' : 'events'}${cursor === null ? '' : '; there are older ones'}.`;
    more.hidden = cursor === null;
  };

  const load = async (append: boolean): Promise<void> => {
    const mine = append ? generation : ++generation;
    list.setAttribute('aria-busy', 'true');
    more.setAttribute('aria-disabled', 'true');
    try {
      const page = await authed((jwt) => security.listAudit(jwt, { type: type(), limit: PAGE_SIZE, cursor: append ? (cursor ?? undefined) : undefined }));
      if (mine !== generation) return;
      cursor = page.next_cursor;
      const items = page.events.map((event) => eventItem(event, userId));
      const ul = list.querySelector('ul');
      if (append && ul !== null) {
        ul.append(...items);
        shown += items.length;
        // Keyboard and screen-reader users continue from the first event just loaded.
        const first = items[0]?.querySelector('h3');
        if (first) focusHeading(first);
      } else {
        shown = items.length;
        if (items.length === 0) listState(list, type() === undefined ? 'No events yet.' : 'No events of this type.');
        else replace(list, h('ul', { class: 'items' }, ...items));
      }
      counted();
    } catch (error) {
      if (error instanceof SessionEnded || mine !== generation) return;
      if (append) status.textContent = describeError(error);
      else listState(list, describeError(error), () => void load(false));
    } finally {
      if (mine === generation) {
        list.setAttribute('aria-busy', 'false');
        more.removeAttribute('aria-disabled');
      }
    }
  };

  filter.addEventListener('change', () => void load(false));
  refreshButton.addEventListener('click', () => void load(false));
  more.addEventListener('click', () => {
    if (more.getAttribute('aria-disabled') !== 'true') void load(true);
  });

  listState(list, 'Loading your events…');
  void load(false);
  const element = h(
    'section',
    { class: 'screen' },
    pageHead(heading, 'What happened to your account, newest first: logins, password changes, sessions, tokens and apps, and leak reports.', null),
    h(
      'section',
      { class: 'card', 'aria-labelledby': listHeading.id },
      h('div', { class: 'card-head' }, listHeading, h('div', { class: 'log-controls' }, h('label', { for: filterId }, 'Show'), filter, refreshButton)),
      list,
      h('div', { class: 'log-footer' }, status, more),
    ),
  );
  return { element, heading };
}
