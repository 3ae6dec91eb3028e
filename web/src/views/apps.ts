import * as api from '../api.js';
import { confirmAction } from '../confirm.js';
import { focusHeading, h, replace, srOnly, uid } from '../dom.js';
import { describeError, formatDate, formatDateTime } from '../format.js';
import { FormController, textField } from '../forms.js';
import { forgetIssued, hintOf, issuedFor, rememberIssued, type IssuedToken } from '../issued-tokens.js';
import { notify } from '../notices.js';
import { chooseAppTokenScopes } from '../scope-dialog.js';
import { scopeChips, scopePicker } from '../scope-picker.js';
import { secretPanel } from '../secret.js';
import { authed, SessionEnded } from '../session.js';
import { disclosure, listState, meta, pageHead, timeOf } from './parts.js';
import { displayHint } from './tokens.js';
import { revokeByIdCard } from './revoke-by-id.js';
import type { View } from './view.js';

const NO_SCOPES = 'No scopes: can call GET /api/me and read its own app.';

/** The apps screen: list, register, issue and revoke app tokens, delete. */
export function appsView(userId: string): View {
  const heading = h('h1', {}, 'Apps');
  const registerButton = h('button', { type: 'button', class: 'button button-primary' }, 'Register app');
  const secretSlot = h('div', {});
  const listHeading = h('h2', { id: uid('apps-heading'), tabindex: -1 }, 'Your apps');
  const list = h('div', { class: 'list', 'aria-busy': 'true' });
  let apps: readonly api.App[] = [];
  // Also tells, once the catalogue is loaded, whether app tokens can carry any scope at all.
  const registerScopes = scopePicker('app_token', 'Scopes of its first token', 'Platform scopes the app token may carry. With none it can call GET /api/me and read its own app.', true);

  /** Shows a new app token once; its id is remembered (in this tab) so it can be revoked here. */
  const showToken = (title: string, token: { token: string; token_id: string; created_at: string }, appId: string, scopes: readonly string[]) => {
    rememberIssued(userId, { tokenId: token.token_id, appId, createdAt: token.created_at, hint: hintOf(token.token), scopes });
    const panel = secretPanel({
      title,
      label: 'New app token value',
      value: token.token,
      details: h(
        'div',
        { class: 'stack-small' },
        h('p', { class: 'muted small' }, 'Token id (to revoke it later): ', h('code', { class: 'break' }, token.token_id)),
        scopeChips(scopes, NO_SCOPES),
      ),
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

  /** Issues a token at once, or first asks for its scopes when the platform offers app tokens any. */
  const issue = (app: api.App) =>
    act(async () => {
      const offered = await registerScopes.ready;
      const scopes = offered.length > 0 ? await chooseAppTokenScopes(`Issue a token for “${app.name}”`) : [];
      if (scopes === null) return;
      const token = await authed((jwt) => api.issueAppToken(jwt, app.id, scopes));
      showToken(`New token for “${app.name}”`, token, app.id, scopes);
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
              token.scopes ? scopeChips(token.scopes, NO_SCOPES) : null,
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
  const form = h('form', { class: 'stack' }, name.element, description.element, registerScopes.element, h('div', { class: 'actions' }, submit, cancel));
  const formCard = h('section', { class: 'card', 'aria-label': 'Register an app' }, h('h2', {}, 'Register an app'), form);
  const toggle = disclosure(registerButton, formCard);
  cancel.addEventListener('click', () => {
    toggle.close();
    registerButton.focus();
  });
  const controller = new FormController(form, { name, description, scopes: registerScopes }, submit);
  controller.onSubmit('Registering…', async () => {
    if (!controller.check({ name: name.value.trim() === '' ? 'Give the app a name.' : null })) return;
    const scopes = registerScopes.value();
    const input = { name: name.value, description: description.value, ...(scopes.length > 0 ? { scopes } : {}) };
    const created = await authed((jwt) => api.registerApp(jwt, input));
    form.reset();
    toggle.close();
    showToken(`“${created.name}” is registered: here is its app token`, created, created.id, scopes);
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
