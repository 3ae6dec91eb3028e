import * as api from '../api.js';
import { confirmAction } from '../confirm.js';
import { h, replace, srOnly, uid } from '../dom.js';
import { describeError } from '../format.js';
import { notify } from '../notices.js';
import { scopeChips } from '../scope-picker.js';
import { authed, SessionEnded } from '../session.js';
import { leakedItem, type LeakedToken } from './leaked-tokens.js';
import { displayHint, loadList, tokenMeta } from './parts.js';
import { tokenDetails } from './token-detail.js';

export const NO_APP_SCOPES = 'No scopes: can call GET /api/me and read its own app.';

export interface AppTokenList {
  readonly element: HTMLElement;
  /** Loads the app's active tokens again, e.g. after one was issued. */
  refresh(): Promise<void>;
}

/**
 * The active tokens of one app, from GET /api/apps/{id}/tokens (hints, never values), each with its
 * details (last use, networks, rotation with a grace period) and a confirmed revoke; then, greyed,
 * its tokens revoked because they were reported leaked (`leaked`, from the audit log).
 */
export function appTokenList(app: api.App, showRotated: (rotated: api.RotatedToken) => void, leaked: readonly LeakedToken[] = []): AppTokenList {
  const heading = h('h4', { id: uid('app-tokens') }, 'Active tokens');
  const list = h('div', { 'aria-busy': 'true' }, h('p', { class: 'muted small' }, 'Loading its tokens…'));

  const refresh = () =>
    loadList(
      list,
      async () => {
        const { tokens } = await authed((jwt) => api.listAppTokens(jwt, app.id));
        const none = tokens.length === 0 ? h('p', { class: 'muted small' }, 'No active token: issue one for the app to call the platform.') : null;
        const items = [...tokens.map(tokenItem), ...leaked.map(leakedItem)];
        replace(list, none, items.length === 0 ? null : h('ul', {}, ...items));
      },
      (error, retry) => {
        const button = h('button', { type: 'button', class: 'button button-small' }, 'Try again');
        button.addEventListener('click', retry);
        replace(list, h('p', { class: 'field-error' }, describeError(error, 'That app no longer exists.')), button);
      },
    );

  const revoke = async (token: api.AppToken, name: string) => {
    const yes = await confirmAction({
      title: `Revoke this token of “${app.name}”?`,
      body: `The token ending in ${token.hint.slice(-4)} stops working at once, wherever it is deployed. The app's other tokens keep working.`,
      confirm: 'Revoke token',
    });
    if (!yes) return;
    try {
      await authed((jwt) => api.revokeToken(jwt, token.id));
      notify('success', `Token ${name} revoked. It no longer works.`);
    } catch (error) {
      if (error instanceof SessionEnded) return;
      notify('error', describeError(error, 'That token was already revoked.'));
    }
    await refresh();
    heading.setAttribute('tabindex', '-1');
    heading.focus();
  };

  function tokenItem(token: api.AppToken): HTMLLIElement {
    const name = `${displayHint(token.hint)} of ${app.name}`;
    const button = h('button', { type: 'button', class: 'button button-small button-danger-quiet' }, 'Revoke', srOnly(` token ${name}`));
    button.addEventListener('click', () => void revoke(token, name));
    return h(
      'li',
      { class: 'app-token' },
      h(
        'div',
        { class: 'app-token-main' },
        h('code', { class: 'hint-code', title: 'The last four characters of the token' }, displayHint(token.hint)),
        scopeChips(token.scopes, NO_APP_SCOPES),
        tokenMeta(token),
        tokenDetails({ id: token.id, name }, { changed: refresh, showRotated }),
      ),
      button,
    );
  }

  void refresh();
  return { element: h('section', { class: 'app-tokens', 'aria-labelledby': heading.id }, heading, list), refresh };
}
