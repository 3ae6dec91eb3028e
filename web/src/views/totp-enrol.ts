import * as api from '../api.js';
import { confirmTotp, type ConfirmedTotp, type StartedTotp } from '../api-mfa.js';
import { h, uid } from '../dom.js';
import { FormController, textField } from '../forms.js';
import { qrCode } from '../qr.js';
import { authed } from '../session.js';

/** "JBSW Y3DP …": the base32 key in groups of four, the way authenticator apps show it. */
const grouped = (secret: string): string => secret.replace(/(.{4})(?=.)/g, '$1 ');

/**
 * Adding an authenticator app (contract §12.3): the QR code of the `otpauth_uri` and the key as
 * text for an app that cannot scan, then its first code (and an optional name) to confirm it. The
 * secret lives in this panel only; the factor stays pending, and dies on the server after 15
 * minutes, until a code confirms it.
 */
export function totpEnrolPanel(started: StartedTotp, onConfirmed: (result: ConfirmedTotp) => void, onCancel: () => void): HTMLElement {
  const heading = h('h2', { id: uid('totp'), tabindex: -1 }, 'Add an authenticator app');
  const code = textField({
    label: 'Code from the app',
    name: 'code',
    autocomplete: 'one-time-code',
    inputmode: 'numeric',
    spellcheck: false,
    required: true,
    hint: 'The six digits it now shows for rz-auth.',
  });
  const name = textField({ label: 'Name', name: 'name', maxChars: 60, hint: 'To tell your apps apart, for example “Phone”.' });
  const submit = h('button', { type: 'submit', class: 'button button-primary' }, 'Confirm');
  const cancel = h('button', { type: 'button', class: 'button button-quiet' }, 'Cancel');
  const form = h('form', { class: 'stack' }, code.element, name.element, h('div', { class: 'actions' }, submit, cancel));
  const controller = new FormController(form, { code, name }, submit);
  const panel = h(
    'section',
    { class: 'card totp-enrol', 'aria-labelledby': heading.id },
    heading,
    h('p', {}, '1. Scan this code with your authenticator app (Google Authenticator, 1Password, Aegis, and the like).'),
    qrCode(started.otpauth_uri, 'QR code to scan with your authenticator app'),
    h('p', {}, 'Cannot scan it? Enter this key in the app instead:'),
    h('p', {}, h('code', { class: 'totp-secret' }, grouped(started.secret))),
    h('p', {}, '2. Enter the code the app then shows.'),
    form,
  );
  cancel.addEventListener('click', () => {
    panel.remove();
    onCancel();
  });
  controller.onSubmit('Confirming…', async () => {
    if (!controller.check({ code: code.value.trim() === '' ? 'Enter the six-digit code.' : null })) return;
    const label = name.value.trim();
    try {
      const result = await authed((jwt) => confirmTotp(jwt, started.factor_id, code.value.trim(), label === '' ? null : label));
      panel.remove();
      onConfirmed(result);
    } catch (error) {
      if (error instanceof api.ApiError && error.code === 'invalid_credentials') {
        controller.check({ code: 'That code is not right. Check the app’s clock is right, and enter the code it shows now.' });
        return;
      }
      // 404: the 15 minutes passed, or a newer start replaced this one.
      controller.fail(error, 'This setup has expired. Cancel and add the app again.');
    }
  });
  return panel;
}
