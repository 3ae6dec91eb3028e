import * as security from '../api-security.js';
import { typeLabel } from '../audit-text.js';
import { confirmAction } from '../confirm.js';
import { focusHeading, h, replace, srOnly, uid } from '../dom.js';
import { describeError, formatDate } from '../format.js';
import { FormController, onClickOnce, textField } from '../forms.js';
import { notify } from '../notices.js';
import { showSecret } from '../secret.js';
import { authed, SessionEnded } from '../session.js';
import { eventTypePicker } from './event-type-picker.js';
import { addFormCard, listState, loadList, meta, pageHead, timeOf } from './parts.js';
import { deliveryList, type DeliveryList } from './webhook-deliveries.js';
import type { View } from './view.js';

const SECRET_WARNING = 'Your receiver needs it to check that each request comes from rz-auth (Standard Webhooks signatures). If it is lost, delete the endpoint and add it again.';

/** "login.succeeded, token.created and 3 more". */
function typesText(types: readonly string[]): string {
  if (types.length <= 3) return types.join(', ');
  return `${types.slice(0, 2).join(', ')} and ${types.length - 2} more`;
}

/** The Webhooks screen: add an endpoint (its secret shown once, a test sent), list with deliveries, send a test, delete. */
export function webhooksView(): View {
  const heading = h('h1', {}, 'Webhooks');
  const addButton = h('button', { type: 'button', class: 'button button-primary' }, 'Add endpoint');
  const secretSlot = h('div', {});
  const listHeading = h('h2', { id: uid('webhooks-heading'), tabindex: -1 }, 'Your endpoints');
  const list = h('div', { class: 'list', 'aria-busy': 'true' });
  /** The delivery list of each endpoint shown, to reload one after a test is sent to it. */
  const deliveries = new Map<string, DeliveryList>();

  const refresh = () =>
    loadList(list, async () => {
      const { webhooks } = await authed((jwt) => security.listWebhooks(jwt));
      deliveries.clear();
      if (webhooks.length === 0) listState(list, 'No endpoints yet. Add one to have rz-auth send the security events of your account to your own server as they happen.');
      else replace(list, h('ul', { class: 'items' }, ...webhooks.map(webhookItem)));
    });

  /** Sends a test delivery; the endpoint's list then shows it until it settles. */
  const test = async (webhook: security.Webhook, quiet = false) => {
    try {
      await authed((jwt) => security.sendTest(jwt, webhook.id));
      if (!quiet) notify('success', `Test delivery sent to ${webhook.url}. Its status shows below.`);
    } catch (error) {
      if (error instanceof SessionEnded) return;
      notify('error', `The test delivery could not be sent. ${describeError(error, 'That endpoint no longer exists.')}`);
    }
    await deliveries.get(webhook.id)?.refresh();
  };

  const remove = async (webhook: security.Webhook) => {
    const yes = await confirmAction({
      title: `Delete the endpoint ${webhook.url}?`,
      body: `rz-auth stops sending events to ${webhook.url} at once (${typesText(webhook.event_types)}), including retries still pending, and its delivery history is deleted. This cannot be undone.`,
      confirm: 'Delete endpoint',
    });
    if (!yes) return;
    try {
      await authed((jwt) => security.deleteWebhook(jwt, webhook.id));
      notify('success', `Endpoint ${webhook.url} deleted. Nothing more is sent to it.`);
    } catch (error) {
      if (error instanceof SessionEnded) return;
      notify('error', describeError(error, 'That endpoint was already deleted.'));
    }
    await refresh();
    focusHeading(listHeading);
  };

  function webhookItem(webhook: security.Webhook): HTMLLIElement {
    const testButton = h('button', { type: 'button', class: 'button' }, 'Send test', srOnly(` to ${webhook.url}`));
    const deleteButton = h('button', { type: 'button', class: 'button button-danger-quiet' }, 'Delete', srOnly(` endpoint ${webhook.url}`));
    onClickOnce(testButton, () => test(webhook));
    deleteButton.addEventListener('click', () => void remove(webhook));
    const recent = deliveryList(webhook);
    deliveries.set(webhook.id, recent);
    return h(
      'li',
      { class: 'item item-webhook', 'data-webhook': webhook.id },
      h(
        'div',
        { class: 'item-main' },
        h('div', { class: 'item-title' }, h('h3', { class: 'break' }, webhook.url)),
        webhook.description === null || webhook.description === '' ? null : h('p', { class: 'description' }, webhook.description),
        h('ul', { class: 'chips', 'aria-label': 'Event types' }, ...webhook.event_types.map((t) => h('li', { title: typeLabel(t) }, h('code', {}, t)))),
        h('dl', { class: 'meta' }, meta('Added', timeOf(webhook.created_at, formatDate(webhook.created_at))), meta('Endpoint id', h('code', { class: 'break' }, webhook.id))),
        recent.element,
      ),
      h('div', { class: 'item-actions' }, testButton, deleteButton),
    );
  }

  // Add an endpoint.
  const url = textField({ label: 'URL', name: 'url', required: true, maxChars: 2048, spellcheck: false, inputmode: 'url', hint: 'An http or https address of your server, e.g. https://hooks.example.com/rz-auth. Private and local addresses are refused unless the operator allows them.' });
  const types = eventTypePicker();
  const description = textField({ label: 'Description', name: 'description', hint: 'What receives these events, for you to recognise it later.' });
  const { form, card: formCard, submit, close: closeForm } = addFormCard(addButton, 'Add a webhook endpoint', 'Add endpoint', url.element, types.element, description.element);
  const controller = new FormController(form, { url, event_types: types, description }, submit);
  controller.onSubmit('Adding…', async () => {
    const eventTypes = types.value();
    const ok = controller.check({
      url: url.value.trim() === '' ? 'Enter the address to send events to.' : null,
      event_types: eventTypes.length === 0 ? 'Choose at least one event type.' : null,
    });
    if (!ok) return;
    const note = description.value.trim();
    const created = await authed((jwt) => security.createWebhook(jwt, { url: url.value.trim(), event_types: eventTypes, ...(note === '' ? {} : { description: note }) }));
    form.reset();
    types.reset();
    closeForm();
    showSecret(secretSlot, {
      title: `Signing secret for ${created.url}`,
      label: 'Webhook signing secret',
      value: created.secret,
      warning: SECRET_WARNING,
      details: h('p', { class: 'muted small' }, 'A test delivery (webhook.test) is on its way to the endpoint: its status shows in the list below.'),
      onDone: () => focusHeading(listHeading),
    });
    await refresh();
    await test(created, true);
  });

  listState(list, 'Loading your endpoints…');
  void refresh();
  const element = h(
    'section',
    { class: 'screen' },
    pageHead(heading, 'rz-auth sends the security events of your account to your own endpoints as they happen, signed with a secret only you and rz-auth know, and retried for a day until they arrive.', addButton),
    secretSlot,
    formCard,
    h('section', { class: 'card', 'aria-labelledby': listHeading.id }, listHeading, list),
  );
  return { element, heading };
}
