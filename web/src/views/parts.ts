import { h, replace, uid, type Child } from '../dom.js';
import { describeError, formatDate, fromNow } from '../format.js';
import { SessionEnded } from '../session.js';

/** The top of a screen: its title, one line on what it is for, and its main action. */
export function pageHead(heading: HTMLElement, lede: string, action: Child): HTMLElement {
  return h('div', { class: 'page-head' }, h('div', {}, heading, h('p', { class: 'lede' }, lede)), action);
}

/**
 * A button that shows and hides a panel (a create form). Opening focuses the panel's first field;
 * closing returns focus to the button.
 */
export function disclosure(button: HTMLButtonElement, panel: HTMLElement): { open(): void; close(): void } {
  panel.id ||= uid('panel');
  button.setAttribute('aria-controls', panel.id);
  const set = (open: boolean, focus: boolean) => {
    panel.hidden = !open;
    button.setAttribute('aria-expanded', String(open));
    if (focus) (open ? panel.querySelector<HTMLElement>('input, textarea, select') : button)?.focus();
  };
  set(false, false);
  button.addEventListener('click', () => set(panel.hidden !== false, true));
  return { open: () => set(true, true), close: () => set(false, false) };
}

/**
 * A list screen's "add" form: a card with its heading, the fields, a submit and a cancel button,
 * opened and closed by the screen's button (a {@link disclosure}); cancel closes it and gives focus
 * back to that button.
 */
export function addFormCard(
  opener: HTMLButtonElement,
  title: string,
  submitLabel: string,
  ...fields: Child[]
): { form: HTMLFormElement; card: HTMLElement; submit: HTMLButtonElement; close(): void } {
  const submit = h('button', { type: 'submit', class: 'button button-primary' }, submitLabel);
  const cancel = h('button', { type: 'button', class: 'button button-quiet' }, 'Cancel');
  const form = h('form', { class: 'stack' }, ...fields, h('div', { class: 'actions' }, submit, cancel));
  const card = h('section', { class: 'card', 'aria-label': title }, h('h2', {}, title), form);
  const toggle = disclosure(opener, card);
  cancel.addEventListener('click', () => {
    toggle.close();
    opener.focus();
  });
  return { form, card, submit, close: toggle.close };
}

/** A list's placeholder while loading, when empty, or when loading failed (with a retry). */
export function listState(container: HTMLElement, text: string, retry?: () => void): void {
  const button = retry ? h('button', { type: 'button', class: 'button' }, 'Try again') : null;
  button?.addEventListener('click', retry ?? (() => {}));
  replace(container, h('div', { class: retry ? 'list-state list-state-error' : 'list-state' }, h('p', {}, text), button));
}

/**
 * Fills a list: `show` loads and renders it while the list is marked busy; a failure is shown by
 * `failed` (by default its message with a retry), except when the session ended (the sign-in screen
 * takes over then).
 */
export async function loadList(
  list: HTMLElement,
  show: () => Promise<void>,
  failed: (error: unknown, retry: () => void) => void = (error, retry) => listState(list, describeError(error), retry),
): Promise<void> {
  list.setAttribute('aria-busy', 'true');
  try {
    await show();
  } catch (error) {
    if (!(error instanceof SessionEnded)) failed(error, () => void loadList(list, show, failed));
  } finally {
    list.setAttribute('aria-busy', 'false');
  }
}

/** A <time> showing a date, with the exact instant on hover. */
export function timeOf(iso: string, text: string): HTMLTimeElement {
  return h('time', { datetime: iso, title: new Date(iso).toLocaleString() }, text);
}

/** One "label: value" pair of an item's metadata. */
export const meta = (label: string, ...value: Child[]): HTMLDivElement => h('div', {}, h('dt', {}, label), h('dd', {}, ...value));

/** "rz_x7Qa" → "rz_…x7Qa": the four characters are the end of the value. */
export const displayHint = (hint: string): string => hint.replace(/^(rza?_)/, '$1…');

function expiryText(expiresAt: string | null): HTMLElement | string {
  if (expiresAt === null) return 'Never';
  const expired = Date.parse(expiresAt) <= Date.now();
  return timeOf(expiresAt, expired ? `Expired ${fromNow(expiresAt)}` : `${formatDate(expiresAt)} (${fromNow(expiresAt)})`);
}

/** When an API or app token was created, last used and expires, as every token list shows it. */
export function tokenMeta(token: { created_at: string; last_used_at: string | null; expires_at: string | null }): HTMLDListElement {
  return h(
    'dl',
    { class: 'meta' },
    meta('Created', timeOf(token.created_at, formatDate(token.created_at))),
    meta('Last used', token.last_used_at === null ? 'Never' : timeOf(token.last_used_at, fromNow(token.last_used_at))),
    meta('Expires', expiryText(token.expires_at)),
  );
}
