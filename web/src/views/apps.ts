import * as api from '../api.js';
import { confirmAction } from '../confirm.js';
import { focusHeading, h, replace, srOnly, uid } from '../dom.js';
import { describeError, formatDate, formatDateTime } from '../format.js';
import { FormController, textField } from '../forms.js';
import { forgetIssued, hintOf, issuedFor, rememberIssued, type IssuedToken } from '../issued-tokens.js';
import { notify } from '../notices.js';
import { secretPanel } from '../secret.js';
import { authed, SessionEnded } from '../session.js';
import { disclosure, listState, meta, pageHead, timeOf } from './parts.js';
import { displayHint } from './tokens.js';
import type { View } from './view.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The apps screen: list, register, issue and revoke app tokens, delete. */
export function appsView(userId: string): View {
  const heading = h('h1', {}, 'Apps');
  const registerButton = h('button', { type: 'button', class: 'button button-primary' }, 'Register app');
  const secretSlot = h('div', {});
  const listHeading = h('h2', { id: uid('apps-heading'), tabindex: -1 }, 'Your apps');
  const list = h('div', { class: 'list', 'aria-busy': 'true' });
  let apps: readonly api.App[] = [];

  /** Shows a new app token once; its id is remembered (in this tab) so it can be revoked here. */
  const showToken = (title: string, token: { token: string; token_id: string; created_at: string }, appId: string) => {
    rememberIssued(userId, { tokenId: token.token_id, appId, createdAt: token.created_at, hint: hintOf(token.token) });
    const panel = secretPanel({
      title,
      label: 'New app token value',
      value: token.token,
      details: h('p', { class: 'muted small' }, 'Token id (to revoke it later): ', h('code', { class: 'break' }, token.token_id)),
      onDone: () => focusHeading(listHeading),
    });
    replace(secretSlot, panel);
    panel.querySelector('h2')?.focus();
  };

  const render = () => {
    if (apps.length === 0) listState(list, 'No apps yet. Register each app or game that calls the platform to give it its own token.');
    else replace(list, h('ul', { class: 'items' }, ...apps.map(appItem)));
  };

  const refresh = async () => {
    list.setAttribute('aria-busy', 'true');
    try {
      apps = (await authed((jwt) => api.listApps(jwt))).apps;
      render();
    } catch (error) {
      if (!(error instanceof SessionEnded)) listState(list, describeError(error), () => void refresh());
    } finally {
      list.setAttribute('aria-busy', 'false');
    }
  };

  /** Runs an action on the list and reports its failure; a 404 means the app or token is gone. */
  const act = async (action: () => Promise<void>, gone: string) => {
    try {
      await action();
    } catch (error) {
      if (error instanceof SessionEnded) return;
      notify('error', describeError(error, gone));
      await refresh();
    }
  };

  const issue = (app: api.App) =>
    act(async () => {
      const token = await authed((jwt) => api.issueAppToken(jwt, app.id));
      showToken(`New token for “${app.name}”`, token, app.id);
      render();
    }, 'That app no longer exists.');

  const revokeIssued = async (app: api.App, token: IssuedToken) => {
    const yes = await confirmAction({
      title: `Revoke this token of “${app.name}”?`,
      body: `The token ending in ${token.hint.slice(-4)} stops working at once, wherever it is deployed. The app's other tokens keep working.`,
      confirm: 'Revoke token',
    });
    if (!yes) return;
    await act(async () => {
      try {
        await authed((jwt) => api.revokeToken(jwt, token.tokenId));
        notify('success', `Token ${displayHint(token.hint)} of “${app.name}” revoked.`);
      } catch (error) {
        if (!(error instanceof api.ApiError && error.status === 404)) throw error;
        notify('info', 'That token was already revoked.');
      }
      forgetIssued(userId, (t) => t.tokenId === token.tokenId);
      render();
      focusHeading(listHeading);
    }, 'That token was already revoked.');
  };

  const remove = async (app: api.App) => {
    const yes = await confirmAction({
      title: `Delete “${app.name}”?`,
      body: 'The app is deleted and every one of its tokens stops working at once. This cannot be undone.',
      confirm: 'Delete app',
    });
    if (!yes) return;
    await act(async () => {
      await authed((jwt) => api.deleteApp(jwt, app.id));
      forgetIssued(userId, (t) => t.appId === app.id);
      notify('success', `App “${app.name}” deleted; its tokens no longer work.`);
      await refresh();
      focusHeading(listHeading);
    }, 'That app was already deleted.');
  };

  function issuedList(app: api.App): HTMLElement | null {
    const issued = issuedFor(userId, app.id);
    if (issued.length === 0) return null;
    return h(
      'div',
      { class: 'issued' },
      h('h4', {}, 'Tokens issued in this tab'),
      h(
        'ul',
        {},
        ...issued.map((token) => {
          const button = h('button', { type: 'button', class: 'button button-small button-danger-quiet' }, 'Revoke', srOnly(` token ${displayHint(token.hint)} of ${app.name}`));
          button.addEventListener('click', () => void revokeIssued(app, token));
          return h(
            'li',
            {},
            h(
              'div',
              { class: 'issued-info' },
              h('span', {}, h('code', {}, displayHint(token.hint)), h('span', { class: 'muted small' }, ' issued ', timeOf(token.createdAt, formatDateTime(token.createdAt)))),
              h('span', { class: 'muted small break' }, 'Token id ', h('code', {}, token.tokenId)),
            ),
            button,
          );
        }),
      ),
    );
  }

  function appItem(app: api.App): HTMLLIElement {
    const issueButton = h('button', { type: 'button', class: 'button' }, 'Issue token', srOnly(` for ${app.name}`));
    const deleteButton = h('button', { type: 'button', class: 'button button-danger-quiet' }, 'Delete', srOnly(` app ${app.name}`));
    issueButton.addEventListener('click', () => void issue(app));
    deleteButton.addEventListener('click', () => void remove(app));
    return h(
      'li',
      { class: 'item item-app' },
      h(
        'div',
        { class: 'item-main' },
        h('div', { class: 'item-title' }, h('h3', {}, app.name)),
        app.description === '' ? null : h('p', { class: 'description' }, app.description),
        h('dl', { class: 'meta' }, meta('Registered', timeOf(app.created_at, formatDate(app.created_at))), meta('App id', h('code', { class: 'break' }, app.id))),
        issuedList(app),
      ),
      h('div', { class: 'item-actions' }, issueButton, deleteButton),
    );
  }

  // Register an app.
  const name = textField({ label: 'Name', name: 'name', required: true, maxlength: 100, hint: 'As people know it, e.g. “Space Invaders”.' });
  const description = textField({ label: 'Description', name: 'description', multiline: true, maxlength: 1000 });
  const submit = h('button', { type: 'submit', class: 'button button-primary' }, 'Register app');
  const cancel = h('button', { type: 'button', class: 'button button-quiet' }, 'Cancel');
  const form = h('form', { class: 'stack' }, name.element, description.element, h('div', { class: 'actions' }, submit, cancel));
  const formCard = h('section', { class: 'card', 'aria-label': 'Register an app' }, h('h2', {}, 'Register an app'), form);
  const toggle = disclosure(registerButton, formCard);
  cancel.addEventListener('click', () => {
    toggle.close();
    registerButton.focus();
  });
  const controller = new FormController(form, { name, description }, submit);
  controller.onSubmit('Registering…', async () => {
    if (!controller.check({ name: name.value.trim() === '' ? 'Give the app a name.' : null })) return;
    const created = await authed((jwt) => api.registerApp(jwt, { name: name.value, description: description.value }));
    form.reset();
    toggle.close();
    showToken(`“${created.name}” is registered: here is its app token`, created, created.id);
    await refresh();
  });

  const element = h(
    'section',
    { class: 'screen' },
    pageHead(heading, 'Register each app or game that calls the platform. Its app token (rza_…) can read only its own app.', registerButton),
    secretSlot,
    formCard,
    h('section', { class: 'card', 'aria-labelledby': listHeading.id }, listHeading, list),
    revokeByIdCard(userId, () => render()),
  );
  listState(list, 'Loading your apps…');
  void refresh();
  return { element, heading };
}

/**
 * rz-auth cannot list an app's tokens, so a token issued elsewhere (curl, another tab) is revoked
 * by the id returned when it was issued.
 */
function revokeByIdCard(userId: string, onRevoked: () => void): HTMLElement {
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
