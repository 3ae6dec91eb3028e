import { byId, h, replace } from './dom.js';

export type NoticeKind = 'success' | 'error' | 'info';

/**
 * One message at the top of the page (a polite live region in index.html): what just happened, or
 * why the person is back at the login screen. Replaced by the next one, cleared on navigation.
 */
export function notify(kind: NoticeKind, text: string): void {
  const region = byId('notices', HTMLDivElement);
  const dismiss = h('button', { type: 'button', class: 'notice-dismiss', 'aria-label': 'Dismiss message' }, '×');
  const notice = h('div', { class: `notice notice-${kind}` }, h('p', {}, text), dismiss);
  dismiss.addEventListener('click', () => {
    notice.remove();
    byId('main', HTMLElement).focus();
  });
  replace(region, notice);
}

export function clearNotices(): void {
  byId('notices', HTMLDivElement).replaceChildren();
}
