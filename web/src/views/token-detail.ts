import * as api from '../api.js';
import { confirmAction } from '../confirm.js';
import { h, replace, srOnly, uid } from '../dom.js';
import { describeError, formatDate, fromNow } from '../format.js';
import { notify } from '../notices.js';
import { scopeChips } from '../scope-picker.js';
import { authed, SessionEnded } from '../session.js';
import { meta, timeOf } from './parts.js';

/** How long the old value keeps working after a rotation. */
const GRACE_CHOICES: ReadonlyArray<readonly [number, string]> = [
  [0, 'Stop the old value at once'],
  [3600, 'Keep the old value for 1 hour'],
  [86_400, 'Keep the old value for 1 day'],
  [604_800, 'Keep the old value for 7 days'],
];

export interface DetailActions {
  /** The token changed (narrowed, rotated): reload the list. */
  readonly changed: () => Promise<void>;
  /** Show a rotation's new value once. */
  readonly showRotated: (rotated: api.RotatedToken) => void;
}

/** The scopes a token carries but never used: what "narrow to the scopes it uses" removes. */
const unused = (t: api.TokenDetail) => t.scopes.filter((s) => !t.scopes_used.includes(s));

/**
 * A token's details, loaded when opened: its last use and address, the scopes it exercised and its
 * networks, with one-click narrowing to the scopes it uses and rotation with a chosen grace period.
 */
export function tokenDetails(token: api.ApiToken, actions: DetailActions): HTMLElement {
  const button = h('button', { type: 'button', class: 'button button-quiet', 'aria-expanded': 'false' }, 'Details', srOnly(` of token ${token.name}`));
  const panel = h('div', { class: 'token-detail', id: uid('detail'), hidden: true });
  button.setAttribute('aria-controls', panel.id);

  const load = async () => {
    replace(panel, h('p', { class: 'muted small' }, 'Loading…'));
    try {
      replace(panel, render(await authed((jwt) => api.getToken(jwt, token.id))));
    } catch (error) {
      if (!(error instanceof SessionEnded)) replace(panel, h('p', { class: 'field-error' }, describeError(error, 'That token no longer exists.')));
    }
  };
  button.addEventListener('click', () => {
    const open = panel.hidden;
    panel.hidden = !open;
    button.setAttribute('aria-expanded', String(open));
    if (open) void load();
  });

  const narrow = async (detail: api.TokenDetail) => {
    const yes = await confirmAction({
      title: `Narrow “${detail.name}” to the scopes it uses?`,
      body: `It loses ${unused(detail).join(', ')} from its next request on. A token can never get a scope back: create a new one if it needs it again.`,
      confirm: 'Narrow token',
    });
    if (!yes) return;
    try {
      await authed((jwt) => api.updateToken(jwt, detail.id, { scopes: [...detail.scopes_used] }));
      notify('success', `Token “${detail.name}” now carries only the scopes it uses.`);
      await actions.changed();
    } catch (error) {
      if (!(error instanceof SessionEnded)) notify('error', describeError(error));
    }
  };

  const rotate = async (detail: api.TokenDetail, grace: number) => {
    const label = GRACE_CHOICES.find(([seconds]) => seconds === grace)?.[1] ?? '';
    const yes = await confirmAction({
      title: `Rotate “${detail.name}”?`,
      body: `A new value with the same scopes, networks and lifetime replaces it. ${label}.`,
      confirm: 'Rotate token',
    });
    if (!yes) return;
    try {
      actions.showRotated(await authed((jwt) => api.rotateToken(jwt, detail.id, grace)));
      await actions.changed();
    } catch (error) {
      if (!(error instanceof SessionEnded)) notify('error', describeError(error, 'That token was already rotated: rotate its replacement.'));
    }
  };

  function render(detail: api.TokenDetail): HTMLElement {
    const lastUse = detail.last_used_at === null ? 'Never' : timeOf(detail.last_used_at, `${fromNow(detail.last_used_at)}${detail.last_used_ip ? ` from ${detail.last_used_ip}` : ''}`);
    const narrowButton = h('button', { type: 'button', class: 'button' }, 'Narrow to the scopes it uses');
    narrowButton.addEventListener('click', () => void narrow(detail));
    const selectId = uid('grace');
    const grace = h('select', { id: selectId, name: 'grace' }, ...GRACE_CHOICES.map(([seconds, text]) => h('option', { value: String(seconds) }, text)));
    const rotateButton = h('button', { type: 'button', class: 'button' }, 'Rotate');
    rotateButton.addEventListener('click', () => void rotate(detail, Number(grace.value)));
    return h(
      'div',
      { class: 'stack' },
      h(
        'dl',
        { class: 'meta' },
        meta('Last used', lastUse),
        meta('Networks', detail.allowed_cidrs === null ? 'Anywhere' : detail.allowed_cidrs.join(', ')),
        meta('Created', timeOf(detail.created_at, formatDate(detail.created_at))),
      ),
      h('p', { class: 'small' }, 'Scopes it has used:'),
      scopeChips(detail.scopes_used, 'None yet.'),
      // Offered only when it would remove something, and never to zero scopes by surprise.
      unused(detail).length > 0 && detail.last_used_at !== null ? h('div', { class: 'actions' }, narrowButton) : null,
      h('div', { class: 'field' }, h('label', { for: selectId }, 'Rotation'), h('div', { class: 'input-row' }, grace, rotateButton)),
    );
  }

  return h('div', { class: 'token-details' }, button, panel);
}
