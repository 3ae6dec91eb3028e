import * as security from '../api-security.js';
import { EVENT_TYPES, isAuditType, typeLabel } from '../audit-text.js';
import { h, replace, uid } from '../dom.js';
import { type FieldView, groupField } from '../forms.js';
import { authed, SessionEnded } from '../session.js';

export interface EventTypePicker extends FieldView {
  readonly element: HTMLElement;
  /** The types checked, in the offered order. */
  value(): security.AuditType[];
  /** Unchecks everything (after the form was sent). */
  reset(): void;
}

function checkbox(type: security.AuditType): HTMLElement {
  const id = uid('event-type');
  const input = h('input', { type: 'checkbox', id, name: 'event_types', value: type });
  return h('div', { class: 'check' }, input, h('label', { for: id }, typeLabel(type), ' ', h('code', {}, type)));
}

/**
 * Checkboxes for the event types an endpoint may subscribe to (GET /api/webhooks/event-types), with
 * a "select all" box that shows mixed when some are checked. If the list cannot be loaded, the page's
 * own list is offered: the server still checks every type.
 */
export function eventTypePicker(): EventTypePicker {
  const allId = uid('event-types-all');
  const all = h('input', { type: 'checkbox', id: allId });
  const list = h('div', { class: 'scope-list event-type-list' }, h('p', { class: 'muted small' }, 'Loading event types…'));
  const group = groupField('Event types', 'The events of your account to send to this endpoint.', h('div', { class: 'check check-all' }, all, h('label', { for: allId }, 'Select all')), list);
  all.setAttribute('aria-controls', (list.id = uid('event-types')));

  const boxes = () => [...list.querySelectorAll<HTMLInputElement>('input[name="event_types"]')];
  const sync = () => {
    const checked = boxes().filter((b) => b.checked).length;
    all.checked = checked > 0 && checked === boxes().length;
    all.indeterminate = checked > 0 && checked < boxes().length;
  };
  all.addEventListener('change', () => {
    for (const box of boxes()) box.checked = all.checked;
    sync();
  });
  list.addEventListener('change', sync);

  const show = async () => {
    let types: readonly security.AuditType[];
    try {
      types = (await authed((jwt) => security.webhookEventTypes(jwt))).event_types;
    } catch (error) {
      if (error instanceof SessionEnded) return;
      types = EVENT_TYPES.map(([type]) => type);
    }
    replace(list, ...types.map(checkbox));
    sync();
  };
  void show();

  return {
    element: group.element,
    get focusTarget() {
      return group.focusTarget;
    },
    setError: group.setError,
    value: () => boxes().filter((b) => b.checked).map((b) => b.value).filter(isAuditType),
    reset() {
      for (const box of boxes()) box.checked = false;
      sync();
    },
  };
}
