import * as api from '../api.js';
import { confirmAction } from '../confirm.js';
import { h, replace, srOnly, uid } from '../dom.js';
import { describeError, formatDate, fromNow } from '../format.js';
import { notify } from '../notices.js';
import { scopeChips } from '../scope-picker.js';
import { loadScopes } from '../scopes.js';
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

/** A token as its list shows it: `name` says which one in button labels and confirmations. */
export interface ListedToken {
  readonly id: string;
  readonly name: string;
}

/**
 * The scopes a token carries but never used: what "narrow to the scopes it uses" removes. Only
 * rz-auth's own: the platform's scopes are checked by its services, so rz-auth never sees them used.
 */
const unused = (t: api.TokenDetail, builtin: ReadonlySet<string>) => t.scopes.filter((s) => builtin.has(s) && !t.scopes_used.includes(s));

/**
 * A token's details, loaded when opened: its last use and address, the scopes it exercised and its
 * networks, with one-click narrowing to the scopes it uses and rotation with a chosen grace period.
 */
export function tokenDetails(token: ListedToken, actions: DetailActions): HTMLElement {
  const button = h('button', { type: 'button', class: 'button button-quiet', 'aria-expanded': 'false' }, 'Details', srOnly(` of token ${token.name}`));
  const panel = h('div', { class: 'token-detail', id: uid('detail'), hidden: true });
  button.setAttribute('aria-controls', panel.id);

  const load = async () => {
    replace(panel, h('p', { class: 'muted small' }, 'Loading…'));
    try {
      const [detail, scopes] = await Promise.all([authed((jwt) => api.getToken(jwt, token.id)), loadScopes()]);
      replace(panel, render(detail, new Set(scopes.filter((s) => s.builtin).map((s) => s.name))));
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

  const narrow = async (detail: api.TokenDetail, dropped: readonly string[]) => {
    const yes = await confirmAction({
      title: `Narrow “${token.name}” to the scopes it uses?`,
      body: `It loses ${dropped.join(', ')} from its next request on. A token can never get a scope back: create a new one if it needs it again.`,
      confirm: 'Narrow token',
    });
    if (!yes) return;
    try {
      await authed((jwt) => api.updateToken(jwt, detail.id, { scopes: detail.scopes.filter((s) => !dropped.includes(s)) }));
      notify('success', `Token “${token.name}” now carries only the scopes it uses.`);
      await actions.changed();
    } catch (error) {
      if (!(error instanceof SessionEnded)) notify('error', describeError(error));
    }
  };

  const rotate = async (detail: api.TokenDetail, grace: number) => {
    const label = GRACE_CHOICES.find(([seconds]) => seconds === grace)?.[1] ?? '';
    const yes = await confirmAction({
      title: `Rotate “${token.name}”?`,
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

  function render(detail: api.TokenDetail, builtin: ReadonlySet<string>): HTMLElement {
    const dropped = unused(detail, builtin);
    const lastUse = detail.last_used_at === null ? 'Never' : timeOf(detail.last_used_at, `${fromNow(detail.last_used_at)}${detail.last_used_ip ? ` from ${detail.last_used_ip}` : ''}`);
    const narrowButton = h('button', { type: 'button', class: 'button' }, 'Narrow to the scopes it uses');
    narrowButton.addEventListener('click', () => void narrow(detail, dropped));
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
      detail.scopes.some((s) => !builtin.has(s)) ? h('p', { class: 'muted small' }, 'Platform scopes are checked by your own services, so rz-auth does not see them used.') : null,
      scopeChips(detail.scopes_used, 'None yet.'),
      // Offered only when it would remove something, and never to zero scopes by surprise.
      dropped.length > 0 && detail.last_used_at !== null ? h('div', { class: 'actions' }, narrowButton) : null,
      h('div', { class: 'field' }, h('label', { for: selectId }, 'Rotation'), h('div', { class: 'input-row' }, grace, rotateButton)),
    );
  }

  return h('div', { class: 'token-details' }, button, panel);
}
