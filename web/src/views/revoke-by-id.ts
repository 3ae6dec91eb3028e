import * as api from '../api.js';
import { confirmAction } from '../confirm.js';
import { h, uid } from '../dom.js';
import { FormController, textField } from '../forms.js';
import { forgetIssued } from '../issued-tokens.js';
import { notify } from '../notices.js';
import { authed } from '../session.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * rz-auth cannot list an app's tokens, so a token issued elsewhere (curl, another tab) is revoked
 * by the id returned when it was issued.
 */
export function revokeByIdCard(userId: string, onRevoked: () => void): HTMLElement {
  const heading = h('h2', { id: uid('revoke-heading') }, 'Revoke an app token by id');
  const tokenId = textField({
    label: 'Token id',
    name: 'token_id',
    required: true,
    spellcheck: false,
    hint: 'The token_id returned when the token was issued, e.g. 0b6f3c1e-2a4d-4c8e-9f10-5a7b3d2e1c90.',
  });
  const submit = h('button', { type: 'submit', class: 'button button-danger-quiet' }, 'Revoke token');
  const form = h('form', { class: 'stack' }, tokenId.element, h('div', { class: 'actions' }, submit));
  const controller = new FormController(form, { token_id: tokenId }, submit);
  controller.onSubmit('Revoking…', async () => {
    const id = tokenId.value.trim();
    if (!controller.check({ token_id: UUID.test(id) ? null : 'Enter a token id: 36 characters of hex digits and hyphens.' })) return;
    const yes = await confirmAction({
      title: 'Revoke this token?',
      body: `Token ${id} stops working at once, wherever it is deployed. This cannot be undone.`,
      confirm: 'Revoke token',
    });
    if (!yes) return;
    try {
      await authed((jwt) => api.revokeToken(jwt, id));
    } catch (error) {
      if (error instanceof api.ApiError && error.status === 404) {
        controller.check({ token_id: 'None of your active tokens has this id. It may have been revoked already.' });
        return;
      }
      throw error;
    }
    form.reset();
    forgetIssued(userId, (t) => t.tokenId === id);
    notify('success', `Token ${id} revoked. It no longer works.`);
    onRevoked();
    tokenId.control.focus();
  });
  return h(
    'section',
    { class: 'card', 'aria-labelledby': heading.id },
    heading,
    h('p', { class: 'muted' }, 'rz-auth never lists or shows existing app tokens. To rotate one: issue a new token, deploy it, then revoke the old one here by its id.'),
    form,
  );
}
