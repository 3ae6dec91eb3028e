import * as api from '../api.js';
import { confirmAction } from '../confirm.js';
import { focusHeading, h, replace, srOnly, uid } from '../dom.js';
import { describeError, formatDate } from '../format.js';
import { FormController, onClickOnce, textField } from '../forms.js';
import { notify } from '../notices.js';
import { chooseAppTokenScopes } from '../scope-dialog.js';
import { scopeChips, scopePicker } from '../scope-picker.js';
import { showSecret } from '../secret.js';
import { authed, SessionEnded } from '../session.js';
import { appTokenList, NO_APP_SCOPES, type AppTokenList } from './app-tokens.js';
import { leakedTokens, type LeakedToken } from './leaked-tokens.js';
import { addFormCard, listState, loadList, meta, pageHead, timeOf } from './parts.js';
import type { View } from './view.js';

/** The apps screen: list, register, delete; each app with its active tokens (issue, rotate, revoke). */
export function appsView(): View {
  const heading = h('h1', {}, 'Apps');
  const registerButton = h('button', { type: 'button', class: 'button button-primary' }, 'Register app');
  const secretSlot = h('div', {});
  const listHeading = h('h2', { id: uid('apps-heading'), tabindex: -1 }, 'Your apps');
  const list = h('div', { class: 'list', 'aria-busy': 'true' });
  let apps: readonly api.App[] = [];
  let leaked: readonly LeakedToken[] = [];
  // Also tells, once the catalogue is loaded, whether app tokens can carry any scope at all.
  const registerScopes = scopePicker('app_token', 'Scopes of its first token', 'Platform scopes the app token may carry. With none it can call GET /api/me and read its own app.', true);

  /** The token list of each app shown, to reload one when a token is issued for it. */
  const tokenLists = new Map<string, AppTokenList>();

  /** Shows a new app token's value once. */
  const showValue = (title: string, value: string, details: HTMLElement) =>
    showSecret(secretSlot, { title, label: 'New app token value', value, details, onDone: () => focusHeading(listHeading) });
  const showToken = (title: string, value: string, scopes: readonly string[]) => showValue(title, value, scopeChips(scopes, NO_APP_SCOPES));
  const showRotated = (rotated: api.RotatedToken) =>
    showValue(`New value for a token of “${rotated.name}”`, rotated.token, h('p', { class: 'muted small' }, 'Same scopes and networks. Replace the old value wherever the app is deployed.'));

  const render = () => {
    tokenLists.clear();
    if (apps.length === 0) listState(list, 'No apps yet. Register each app or game that calls the platform to give it its own token.');
    else replace(list, h('ul', { class: 'items' }, ...apps.map(appItem)));
  };

  const refresh = () =>
    loadList(list, async () => {
      // App tokens revoked because they leaked come from the audit log; if it cannot be read, the active ones still show.
      [{ apps }, leaked] = await Promise.all([authed((jwt) => api.listApps(jwt)), authed((jwt) => leakedTokens(jwt, true)).catch(() => [])]);
      render();
    });

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
      showToken(`New token for “${app.name}”`, token.token, scopes);
      await tokenLists.get(app.id)?.refresh();
    }, 'That app no longer exists.');

  const remove = async (app: api.App) => {
    const yes = await confirmAction({
      title: `Delete “${app.name}”?`,
      body: 'The app is deleted and every one of its tokens stops working at once. This cannot be undone.',
      confirm: 'Delete app',
    });
    if (!yes) return;
    await act(async () => {
      await authed((jwt) => api.deleteApp(jwt, app.id));
      notify('success', `App “${app.name}” deleted; its tokens no longer work.`);
      await refresh();
      focusHeading(listHeading);
    }, 'That app was already deleted.');
  };

  function appItem(app: api.App): HTMLLIElement {
    const issueButton = h('button', { type: 'button', class: 'button' }, 'Issue token', srOnly(` for ${app.name}`));
    const deleteButton = h('button', { type: 'button', class: 'button button-danger-quiet' }, 'Delete', srOnly(` app ${app.name}`));
    onClickOnce(issueButton, () => issue(app));
    deleteButton.addEventListener('click', () => void remove(app));
    const tokens = appTokenList(app, showRotated, leaked.filter((t) => t.appId === app.id));
    tokenLists.set(app.id, tokens);
    return h(
      'li',
      { class: 'item item-app' },
      h(
        'div',
        { class: 'item-main' },
        h('div', { class: 'item-title' }, h('h3', {}, app.name)),
        app.description === '' ? null : h('p', { class: 'description' }, app.description),
        h('dl', { class: 'meta' }, meta('Registered', timeOf(app.created_at, formatDate(app.created_at))), meta('App id', h('code', { class: 'break' }, app.id))),
        tokens.element,
      ),
      h('div', { class: 'item-actions' }, issueButton, deleteButton),
    );
  }

  // Register an app.
  const name = textField({ label: 'Name', name: 'name', required: true, maxChars: 100, hint: 'As people know it, e.g. “Space Invaders”.' });
  const description = textField({ label: 'Description', name: 'description', multiline: true, maxChars: 1000 });
  const { form, card: formCard, submit, close: closeForm } = addFormCard(registerButton, 'Register an app', 'Register app', name.element, description.element, registerScopes.element);
  const controller = new FormController(form, { name, description, scopes: registerScopes }, submit);
  controller.onSubmit('Registering…', async () => {
    if (!controller.check({ name: name.value.trim() === '' ? 'Give the app a name.' : null })) return;
    const scopes = registerScopes.value();
    const input = { name: name.value, description: description.value, ...(scopes.length > 0 ? { scopes } : {}) };
    const created = await authed((jwt) => api.registerApp(jwt, input));
    form.reset();
    closeForm();
    showToken(`“${created.name}” is registered: here is its app token`, created.token, scopes);
    await refresh();
  });

  const element = h(
    'section',
    { class: 'screen' },
    pageHead(heading, 'Register each app or game that calls the platform. Its app token (rza_…) can read only its own app.', registerButton),
    secretSlot,
    formCard,
    h('section', { class: 'card', 'aria-labelledby': listHeading.id }, listHeading, list),
  );
  listState(list, 'Loading your apps…');
  void refresh();
  return { element, heading };
}
