import * as api from '../api.js';
import { confirmAction } from '../confirm.js';
import { focusHeading, h, replace, srOnly, uid } from '../dom.js';
import { describeError, formatDate } from '../format.js';
import { FormController, textField, type FieldView } from '../forms.js';
import { notify } from '../notices.js';
import { scopeChips, scopePicker } from '../scope-picker.js';
import { showSecret } from '../secret.js';
import { authed, SessionEnded } from '../session.js';
import { leakedItem, leakedTokens } from './leaked-tokens.js';
import { addFormCard, displayHint, listState, loadList, pageHead, tokenMeta } from './parts.js';
import { tokenDetails } from './token-detail.js';
import type { View } from './view.js';

const DAY = 24 * 3600 * 1000;
const EXPIRY_CHOICES: ReadonlyArray<readonly [string, string]> = [
  ['7', '7 days'],
  ['30', '30 days'],
  ['90', '90 days'],
  ['365', '1 year'],
  ['custom', 'Custom date…'],
  ['never', 'No expiration'],
];

/** The expiry select, and a date input for a custom date. */
function expiryField(): FieldView & { element: HTMLElement; value(): string | null | undefined } {
  const selectId = uid('expiry');
  const select = h('select', { id: selectId, name: 'expiry' }, ...EXPIRY_CHOICES.map(([value, label]) => h('option', { value, selected: value === '30' }, label)));
  const dateId = uid('expiry-date');
  const date = h('input', { id: dateId, type: 'date', name: 'expiry-date' });
  const dateRow = h('div', { class: 'field', hidden: true }, h('label', { for: dateId }, 'Expires at the end of'), date);
  const hint = h('p', { id: uid('expiry-hint'), class: 'hint' });
  const error = h('p', { id: uid('error'), class: 'field-error', hidden: true });

  const custom = () => select.value === 'custom';
  const update = () => {
    dateRow.hidden = !custom();
    const days = Number(select.value);
    hint.textContent = custom()
      ? 'The token stops working at the end of the chosen day (your time zone).'
      : select.value === 'never'
        ? 'The token works until you revoke it. Prefer an expiry for anything that leaves your machine.'
        : `The token stops working on ${formatDate(new Date(Date.now() + days * DAY).toISOString())}.`;
  };
  select.addEventListener('change', update);
  // A date of today or later; the server has the last word on "in the future".
  date.min = new Date().toLocaleDateString('en-CA');
  update();

  const setError = (message: string | null) => {
    error.textContent = message ?? '';
    error.hidden = message === null;
    for (const control of [select, date]) {
      control.setAttribute('aria-describedby', message === null ? hint.id : `${hint.id} ${error.id}`);
      if (message === null) control.removeAttribute('aria-invalid');
      else control.setAttribute('aria-invalid', 'true');
    }
  };
  setError(null);
  return {
    element: h('div', { class: 'field' }, h('label', { for: selectId }, 'Expiration'), select, hint, dateRow, error),
    get focusTarget() {
      return custom() ? date : select;
    },
    setError,
    /** ISO expiry, undefined for none, null when a custom date is missing. */
    value() {
      if (select.value === 'never') return undefined;
      if (!custom()) return new Date(Date.now() + Number(select.value) * DAY).toISOString();
      if (date.value === '') return null;
      // "yyyy-mm-ddThh:mm:ss" without a zone is local time: the end of the day the person chose.
      return new Date(`${date.value}T23:59:59.999`).toISOString();
    },
  };
}

/** The API tokens screen: list, create (value shown once), revoke. */
export function tokensView(): View {
  const heading = h('h1', {}, 'API tokens');
  const newButton = h('button', { type: 'button', class: 'button button-primary' }, 'New token');
  const secretSlot = h('div', {});
  const listHeading = h('h2', { id: uid('tokens-heading'), tabindex: -1 }, 'Your tokens');
  const list = h('div', { class: 'list', 'aria-busy': 'true' });

  const name = textField({ label: 'Name', name: 'name', required: true, maxChars: 100, hint: 'What it is for, e.g. “deploy script” or “laptop CLI”.' });
  const scopes = scopePicker('api_token', 'Scopes', 'Grant only what the token needs. With no scope it can only tell who it belongs to (GET /api/me).');
  const expiry = expiryField();
  const networks = textField({
    label: 'Networks',
    name: 'allowed_cidrs',
    multiline: true,
    spellcheck: false,
    hint: 'One IPv4 or IPv6 network per line, e.g. 203.0.113.0/24; the token is refused from anywhere else. Empty: any address.',
  });
  const { form, card: formCard, submit, close: closeForm } = addFormCard(newButton, 'New API token', 'Create token', name.element, scopes.element, expiry.element, networks.element);

  const refresh = () =>
    loadList(list, async () => {
      // Tokens revoked because they leaked come from the audit log; if it cannot be read, the active list still shows.
      const [{ tokens }, leaked] = await Promise.all([authed((jwt) => api.listTokens(jwt)), authed((jwt) => leakedTokens(jwt)).catch(() => [])]);
      if (tokens.length + leaked.length === 0) listState(list, 'No API tokens yet. Create one for each script, CLI or server that calls the API, so each can be revoked on its own.');
      else replace(list, h('ul', { class: 'items' }, ...tokens.map(tokenItem), ...leaked.map(leakedItem)));
    });

  const revoke = async (token: api.ApiToken) => {
    const yes = await confirmAction({
      title: `Revoke “${token.name}”?`,
      body: 'Anything using this token stops working at once. This cannot be undone.',
      confirm: 'Revoke token',
    });
    if (!yes) return;
    try {
      await authed((jwt) => api.revokeToken(jwt, token.id));
      notify('success', `Token “${token.name}” revoked. It no longer works.`);
    } catch (error) {
      if (error instanceof SessionEnded) return;
      notify('error', describeError(error, 'That token was already revoked.'));
    }
    await refresh();
    focusHeading(listHeading);
  };

  const showRotated = (rotated: api.RotatedToken) => {
    showSecret(secretSlot, {
      title: `New value for “${rotated.name}”`,
      label: 'New API token value',
      value: rotated.token,
      details: h('p', { class: 'muted small' }, 'Same scopes and networks. Replace the old value wherever it is used.'),
      onDone: () => focusHeading(listHeading),
    });
  };

  function tokenItem(token: api.ApiToken): HTMLLIElement {
    const button = h('button', { type: 'button', class: 'button button-danger-quiet' }, 'Revoke', srOnly(` token ${token.name}`));
    button.addEventListener('click', () => void revoke(token));
    return h(
      'li',
      { class: 'item' },
      h(
        'div',
        { class: 'item-main' },
        h('div', { class: 'item-title' }, h('h3', {}, token.name), h('code', { class: 'hint-code', title: 'The last four characters of the token' }, displayHint(token.hint))),
        scopeChips(token.scopes, 'No scopes: can only call GET /api/me.'),
        tokenMeta(token),
        tokenDetails(token, { changed: refresh, showRotated }),
      ),
      h('div', { class: 'item-actions' }, button),
    );
  }

  const controller = new FormController(form, { name, scopes, expires_at: expiry, allowed_cidrs: networks }, submit);
  controller.onSubmit('Creating…', async () => {
    const expiresAt = expiry.value();
    const ok = controller.check({
      name: name.value.trim() === '' ? 'Give the token a name.' : null,
      expires_at: expiresAt === null ? 'Pick a date, or choose another expiration.' : null,
    });
    if (!ok || expiresAt === null) return;
    const cidrs = networks.value.split(/[\s,]+/).filter((c) => c !== '');
    const created = await authed((jwt) =>
      api.createToken(jwt, {
        name: name.value,
        scopes: scopes.value(),
        ...(expiresAt === undefined ? {} : { expires_at: expiresAt }),
        ...(cidrs.length === 0 ? {} : { allowed_cidrs: cidrs }),
      }),
    );
    form.reset();
    expiry.element.querySelector('select')?.dispatchEvent(new Event('change'));
    closeForm();
    showSecret(secretSlot, {
      title: `Your new token “${created.name}”`,
      label: 'New API token value',
      value: created.token,
      details: h('p', { class: 'muted small' }, `Scopes: ${created.scopes.length > 0 ? created.scopes.join(', ') : 'none'}. Expires: ${created.expires_at === null ? 'never' : formatDate(created.expires_at)}.`),
      onDone: () => focusHeading(listHeading),
    });
    await refresh();
  });

  listState(list, 'Loading your tokens…');
  void refresh();
  const element = h(
    'section',
    { class: 'screen' },
    pageHead(heading, 'Tokens let scripts, CLIs and servers call the API as you. Each gets only the scopes you choose.', newButton),
    secretSlot,
    formCard,
    h('section', { class: 'card', 'aria-labelledby': listHeading.id }, listHeading, list),
  );
  return { element, heading };
}
