import { ApiError } from '../api.js';
import { lookupDevice } from '../api-device.js';
import { focusHeading, h, replace, uid } from '../dom.js';
import { FormController, textField } from '../forms.js';
import { authed, SessionEnded } from '../session.js';
import { forgetCode, keepCode, keptCode, normaliseUserCode } from '../user-code.js';
import { deviceProblem, requestPanel, type Outcome } from './device-request.js';
import { pageHead } from './parts.js';
import type { View } from './view.js';

/** Where a CLI sends the person (contract §13.7): the same page as /developers, on this screen. */
export const DEVICE_PATH = '/device';

/** On the login screen of /device: why the visitor must log in first, and that the code waits. */
export const DEVICE_LOGIN_LEDE = 'Log in to approve the request from your terminal. Your code is kept in this tab until you come back.';

function outcomeCard(outcome: Outcome): { card: HTMLElement; heading: HTMLElement } {
  const heading = h('h2', { tabindex: -1 }, outcome === 'approved' ? 'Done. Return to your terminal.' : 'Request denied.');
  const text =
    outcome === 'approved'
      ? h('p', {}, 'Your terminal now gets an API token. It is listed with ', h('a', { href: '/developers#tokens' }, 'your API tokens'), ', where you can revoke it at any time.')
      : h('p', {}, 'No token was issued, and the terminal that asked is told so. You can close this page.');
  return { card: h('section', { class: 'card', role: 'status' }, heading, text), heading };
}

/**
 * The /device screen (contract §13.7): the code the terminal shows, then the request it names with
 * Approve and Deny. A `?user_code=` link only pre-fills the field (user-code.ts): looking up and
 * approving are each the person's own click, so a link someone was sent cannot approve anything.
 */
export function deviceView(): View {
  const heading = h('h1', { id: uid('device-heading') }, 'Connect a device');
  const code = textField({
    label: 'Code from your terminal',
    name: 'user_code',
    required: true,
    spellcheck: false,
    hint: 'Eight letters, like WDJB-MJHT. Capitals, spaces and the dash do not matter.',
  });
  code.control.value = keptCode() ?? '';
  const submit = h('button', { type: 'submit', class: 'button button-primary' }, 'Continue');
  const form = h('form', { class: 'stack', 'aria-labelledby': heading.id }, code.element, h('div', { class: 'actions' }, submit));
  const codeCard = h('section', { class: 'card' }, form);
  const body = h('div', { class: 'stack' }, codeCard);
  const controller = new FormController(form, { user_code: code }, submit);

  /** Back to the code field, e.g. after the request expired while it was shown. */
  const again = () => {
    forgetCode();
    code.control.value = '';
    codeCard.hidden = false;
  };
  const decided = (outcome: Outcome) => {
    forgetCode();
    const shown = outcomeCard(outcome);
    replace(body, shown.card);
    focusHeading(shown.heading);
  };

  controller.onSubmit('Looking up…', async () => {
    const normal = normaliseUserCode(code.value);
    if (normal === null) {
      controller.check({ user_code: 'Enter the eight letters your terminal shows, like WDJB-MJHT.' });
      return;
    }
    code.control.value = normal;
    keepCode(normal);
    try {
      const request = await authed((jwt) => lookupDevice(jwt, { user_code: normal }));
      const panel = requestPanel(request, decided, again);
      codeCard.hidden = true;
      replace(body, codeCard, panel);
      const panelHeading = panel.querySelector('h2');
      if (panelHeading !== null) focusHeading(panelHeading);
    } catch (error) {
      if (error instanceof SessionEnded) return;
      if (error instanceof ApiError && error.status === 404) forgetCode();
      controller.showAlert(deviceProblem(error));
      controller.alert.focus();
    }
  });

  const element = h(
    'section',
    { class: 'screen' },
    pageHead(heading, 'A command-line tool such as rz login asked to act as you. Enter the code it shows to see what it asks for.', null),
    body,
  );
  return { element, heading };
}
