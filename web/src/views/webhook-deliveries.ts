import * as security from '../api-security.js';
import { h, replace, srOnly, uid } from '../dom.js';
import { describeError, formatDateTime, fromNow } from '../format.js';
import { authed } from '../session.js';
import { loadList, timeOf } from './parts.js';

/** How many deliveries an endpoint shows: the recent ones; the API pages through the rest. */
const RECENT = 10;
/** While a delivery is pending, the list reloads itself this often, at most POLLS times in a row. */
const POLL_MS = 2000;
const POLLS = 30;

export interface DeliveryList {
  readonly element: HTMLElement;
  /** Loads the recent deliveries again, and keeps doing so while one is pending. */
  refresh(): Promise<void>;
}

const STATUS: Readonly<Record<security.Delivery['status'], string>> = { pending: 'Pending', succeeded: 'Succeeded', failed: 'Failed' };

/** The last attempt in words: "HTTP 200 in 12 ms", "connection refused", or "not tried yet". */
function lastResult(delivery: security.Delivery): string {
  const last = delivery.attempts.at(-1);
  if (last === undefined) return 'Not tried yet';
  const outcome = last.status_code === null ? (last.error ?? 'No answer') : `HTTP ${last.status_code}`;
  return `${outcome} (${last.duration_ms} ms)`;
}

function whenText(delivery: security.Delivery): HTMLElement | string {
  if (delivery.finished_at !== null) return timeOf(delivery.finished_at, `Finished ${fromNow(delivery.finished_at)}`);
  if (delivery.next_attempt_at !== null) return timeOf(delivery.next_attempt_at, `Next try ${fromNow(delivery.next_attempt_at)}`);
  return '';
}

function row(delivery: security.Delivery): HTMLTableRowElement {
  return h(
    'tr',
    { 'data-delivery': delivery.id, 'data-status': delivery.status },
    h('td', {}, h('code', {}, delivery.event_type)),
    h('td', {}, h('span', { class: `status status-${delivery.status}` }, STATUS[delivery.status])),
    h('td', {}, lastResult(delivery)),
    h('td', {}, String(delivery.attempts.length)),
    h('td', {}, timeOf(delivery.created_at, formatDateTime(delivery.created_at))),
    h('td', {}, whenText(delivery)),
  );
}

/** The recent deliveries of one endpoint, as a table, refreshed on demand and while any is pending. */
export function deliveryList(webhook: security.Webhook): DeliveryList {
  const heading = h('h4', { id: uid('deliveries') }, 'Recent deliveries');
  const refreshButton = h('button', { type: 'button', class: 'button button-small' }, 'Refresh', srOnly(` deliveries to ${webhook.url}`));
  const body = h('div', { 'aria-busy': 'true' }, h('p', { class: 'muted small' }, 'Loading its deliveries…'));
  // The newest delivery's outcome, announced when it changes (a pending test that succeeds, say).
  const latest = h('p', { class: 'sr-only', role: 'status' });
  const element = h('section', { class: 'deliveries', 'aria-labelledby': heading.id }, h('div', { class: 'card-head' }, heading, refreshButton), latest, body);
  let timer: number | undefined;
  let polls = 0;

  const load = (): Promise<void> => {
    window.clearTimeout(timer);
    return loadList(
      body,
      async () => {
        const { deliveries } = await authed((jwt) => security.listDeliveries(jwt, webhook.id, RECENT));
        if (deliveries.length === 0) {
          replace(body, h('p', { class: 'muted small' }, 'Nothing sent yet. Events of the chosen types are sent as they happen; use Send test to try the endpoint now.'));
        } else {
          const head = ['Event', 'Status', 'Last result', 'Attempts', 'Created', 'Finished or next try'].map((label) => h('th', { scope: 'col' }, label));
          replace(
            body,
            h(
              'div',
              { class: 'table-scroll' },
              h('table', { class: 'deliveries-table' }, h('caption', { class: 'sr-only' }, `Recent deliveries to ${webhook.url}, newest first`), h('thead', {}, h('tr', {}, ...head)), h('tbody', {}, ...deliveries.map(row))),
            ),
          );
        }
        const newest = deliveries[0];
        const summary = newest === undefined ? '' : `Latest delivery to ${webhook.url}: ${newest.event_type}, ${STATUS[newest.status].toLowerCase()}, ${lastResult(newest)}.`;
        if (latest.textContent !== summary) latest.textContent = summary;
        // Pending deliveries settle within seconds (or wait for a retry): look again while the screen is open.
        const pending = deliveries.some((d) => d.status === 'pending');
        polls = pending ? polls + 1 : 0;
        if (pending && polls <= POLLS) timer = window.setTimeout(() => void (element.isConnected ? load() : undefined), POLL_MS);
      },
      // No retry here: the Refresh button above is one.
      (error) => replace(body, h('p', { class: 'field-error' }, describeError(error, 'This endpoint no longer exists.'))),
    );
  };

  const refresh = (): Promise<void> => {
    polls = 0;
    return load();
  };
  refreshButton.addEventListener('click', () => void refresh());
  void load();
  return { element, refresh };
}
