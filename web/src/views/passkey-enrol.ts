import * as api from '../api.js';
import { addPasskey, type AddedPasskey, passkeyCreationOptions } from '../api-mfa.js';
import { h, uid } from '../dom.js';
import { FormController, textField } from '../forms.js';
import { authed } from '../session.js';
import { ceremonyMessage, createCredential } from '../webauthn.js';

/**
 * Adding a passkey or security key (contract §12.3): a name, then the browser's registration
 * ceremony for the server's creation options, whose credential the server verifies and keeps.
 * Cancelling the browser's prompt leaves the panel open to try again.
 */
export function passkeyEnrolPanel(onAdded: (result: AddedPasskey) => void, onCancel: () => void): HTMLElement {
  const heading = h('h2', { id: uid('passkey'), tabindex: -1 }, 'Add a passkey');
  const name = textField({ label: 'Name', name: 'name', maxChars: 60, required: true, hint: 'To tell your keys apart, for example “Laptop” or “Blue key”.' });
  const submit = h('button', { type: 'submit', class: 'button button-primary' }, 'Create passkey');
  const cancel = h('button', { type: 'button', class: 'button button-quiet' }, 'Cancel');
  const form = h('form', { class: 'stack' }, name.element, h('div', { class: 'actions' }, submit, cancel));
  const controller = new FormController(form, { name }, submit);
  const panel = h(
    'section',
    { class: 'card passkey-enrol', 'aria-labelledby': heading.id },
    heading,
    h('p', {}, 'Your browser then asks you to create a passkey with this device (fingerprint, face or screen lock), a phone, or a security key.'),
    form,
  );
  cancel.addEventListener('click', () => {
    panel.remove();
    onCancel();
  });
  controller.onSubmit('Waiting for your passkey…', async () => {
    const label = name.value.trim();
    if (!controller.check({ name: label === '' ? 'Enter a name.' : null })) return;
    const started = await authed((jwt) => passkeyCreationOptions(jwt));
    let credential;
    try {
      credential = await createCredential(started.options);
    } catch (error) {
      const message = ceremonyMessage(error);
      if (message === null) throw error;
      controller.showAlert(message);
      return;
    }
    try {
      const result = await authed((jwt) => addPasskey(jwt, { challenge_id: started.challenge_id, name: label, credential }));
      panel.remove();
      onAdded(result);
    } catch (error) {
      if (error instanceof api.ApiError && error.code === 'validation_failed' && error.fieldErrors.some((e) => e.field === 'credential')) {
        controller.showAlert('rz-auth could not verify this passkey (the page’s address may not be the one the server expects). Try again, or use another key.');
        return;
      }
      controller.fail(error);
    }
  });
  return panel;
}
