import * as api from '../api.js';
import { listFactors, newRecoveryCodes, removeFactor, renameFactor, startTotp, type SecondFactor } from '../api-mfa.js';
import { confirmAction } from '../confirm.js';
import { focusHeading, h, replace, srOnly, uid } from '../dom.js';
import { describeError, formatDate, formatDateTime, fromNow } from '../format.js';
import { FormController, onClickOnce, textField } from '../forms.js';
import { notify } from '../notices.js';
import { authed, SessionEnded } from '../session.js';
import { webauthnAvailable } from '../webauthn.js';
import { showMfaBanner } from './mfa-banner.js';
import { loadList, meta, timeOf } from './parts.js';
import { recoveryCodesPanel } from './recovery-codes.js';
import { passkeyEnrolPanel } from './passkey-enrol.js';
import { totpEnrolPanel } from './totp-enrol.js';

const TYPE_LABEL: Readonly<Record<SecondFactor['type'], string>> = { totp: 'Authenticator app', webauthn: 'Security key' };

/** What a factor is: a passkey (it signs in without a password) or a security key, synced or on one device. */
function badges(factor: SecondFactor): HTMLElement[] {
  const label = factor.type === 'webauthn' && factor.passkey ? 'Passkey' : TYPE_LABEL[factor.type];
  const synced = factor.type === 'webauthn' ? [h('span', { class: 'badge' }, factor.synced ? 'Synced' : 'This device only')] : [];
  return [h('span', { class: 'badge' }, label), ...synced];
}

/** Shows what went wrong with an action in the notice area, unless the session ended (the login screen says so). */
function failed(error: unknown, notFound?: string): void {
  if (error instanceof SessionEnded) return;
  if (error instanceof api.ApiError && error.code === 'forbidden') notify('error', 'This server does not offer authenticator apps. Ask the administrator.');
  else notify('error', describeError(error, notFound));
}

/**
 * Two-step login on the Account screen (contract §12.9): the factors with their last use, rename and
 * remove, adding an authenticator app, and recovery codes (shown once, regenerated on demand). Every
 * write needs a recent login: session.ts opens the re-authentication dialog when the API asks.
 */
export function mfaCard(account: string): HTMLElement {
  const heading = h('h2', { id: uid('mfa-heading'), tabindex: -1 }, 'Two-step login');
  const note = h('p', { class: 'muted small card-note' });
  const add = h('button', { type: 'button', class: 'button button-primary' }, 'Add authenticator app');
  const addKey = h('button', { type: 'button', class: 'button', hidden: !webauthnAvailable() }, 'Add a passkey');
  const regenerate = h('button', { type: 'button', class: 'button', hidden: true }, 'New recovery codes');
  const slot = h('div', {});
  const list = h('div', { class: 'list', 'aria-busy': 'true' });

  const refresh = (): Promise<void> =>
    loadList(list, async () => {
      const { factors, recovery_codes_remaining: left, required_by: requiredBy } = await authed((jwt) => listFactors(jwt));
      regenerate.hidden = factors.length === 0;
      note.textContent =
        factors.length === 0
          ? 'Add a second step to your login: after your password, a code from an authenticator app on your phone, or a passkey.'
          : `After your password, logging in asks for one of these. Recovery codes left: ${left} of 10.`;
      if (requiredBy !== null) note.textContent += ` This server requires one: add it before ${formatDate(requiredBy)}.`;
      showMfaBanner(requiredBy);
      replace(list, factors.length === 0 ? null : h('ul', { class: 'items' }, ...factors.map(item)));
    });

  const showCodes = (codes: readonly string[]) => {
    const panel = recoveryCodesPanel(codes, account, () => focusHeading(heading));
    replace(slot, panel);
    panel.querySelector('h2')?.focus();
  };

  function renameForm(factor: SecondFactor, row: HTMLLIElement, shown: HTMLElement[]): HTMLFormElement {
    const name = textField({ label: `New name for “${factor.name}”`, name: 'name', maxChars: 60, required: true });
    name.control.value = factor.name;
    const save = h('button', { type: 'submit', class: 'button button-primary button-small' }, 'Save');
    const cancel = h('button', { type: 'button', class: 'button button-quiet button-small' }, 'Cancel');
    const form = h('form', { class: 'stack-small' }, name.element, h('div', { class: 'actions' }, save, cancel));
    const controller = new FormController(form, { name }, save);
    cancel.addEventListener('click', () => row.replaceChildren(...shown));
    controller.onSubmit('Saving…', async () => {
      if (!controller.check({ name: name.value.trim() === '' ? 'Enter a name.' : null })) return;
      await authed((jwt) => renameFactor(jwt, factor.id, name.value.trim()));
      notify('success', 'Renamed.');
      await refresh();
    });
    return form;
  }

  function item(factor: SecondFactor): HTMLLIElement {
    const rename = h('button', { type: 'button', class: 'button button-small' }, 'Rename', srOnly(` ${factor.name}`));
    const remove = h('button', { type: 'button', class: 'button button-danger-quiet button-small' }, 'Remove', srOnly(` ${factor.name}`));
    const shown = [
      h(
        'div',
        { class: 'item-main' },
        h('div', { class: 'item-title' }, h('h3', {}, factor.name), ...badges(factor)),
        h(
          'dl',
          { class: 'meta' },
          meta('Added', timeOf(factor.created_at, formatDateTime(factor.created_at))),
          meta('Last used', factor.last_used_at === null ? 'Never' : timeOf(factor.last_used_at, fromNow(factor.last_used_at))),
        ),
      ),
      h('div', { class: 'item-actions' }, rename, remove),
    ];
    const row = h('li', { class: 'item', 'data-factor': factor.id }, ...shown);
    rename.addEventListener('click', () => {
      const form = renameForm(factor, row, shown);
      row.replaceChildren(form);
      form.querySelector('input')?.focus();
    });
    onClickOnce(remove, async () => {
      const yes = await confirmAction({
        title: `Remove “${factor.name}”?`,
        body: `${factor.type === 'totp' ? 'Its codes no longer log' : 'It no longer logs'} you in, and every other session of your account is signed out.`,
        confirm: 'Remove',
      });
      if (!yes) return;
      try {
        await authed((jwt) => removeFactor(jwt, factor.id));
        notify('success', `Removed “${factor.name}”. Every other session has been signed out.`);
      } catch (error) {
        failed(error, 'It had already been removed.');
      }
      await refresh();
      focusHeading(heading);
    });
    return row;
  }

  /** A factor was added: the recovery codes of a first one are shown, once. */
  const added = (message: string, codes: readonly string[] | undefined) => {
    notify('success', message);
    if (codes !== undefined) showCodes(codes);
    else focusHeading(heading);
    void refresh();
  };

  onClickOnce(add, async () => {
    try {
      const started = await authed((jwt) => startTotp(jwt));
      const panel = totpEnrolPanel(
        started,
        (result) => added(`Added “${result.factor.name}”. Logging in now asks for its code after your password.`, result.recovery_codes),
        () => add.focus(),
      );
      replace(slot, panel);
      panel.querySelector('h2')?.focus();
    } catch (error) {
      failed(error);
    }
  });

  addKey.addEventListener('click', () => {
    const panel = passkeyEnrolPanel(
      (result) => added(`Added “${result.factor.name}”.${result.factor.passkey ? ' It also signs you in without a password.' : ''}`, result.recovery_codes),
      () => addKey.focus(),
    );
    replace(slot, panel);
    panel.querySelector('input')?.focus();
  });

  onClickOnce(regenerate, async () => {
    const yes = await confirmAction({ title: 'Make new recovery codes?', body: 'Your current recovery codes stop working at once.', confirm: 'Make new codes' });
    if (!yes) return;
    try {
      showCodes((await authed((jwt) => newRecoveryCodes(jwt))).recovery_codes);
      void refresh();
    } catch (error) {
      failed(error);
    }
  });

  void refresh();
  return h(
    'section',
    { class: 'card', 'aria-labelledby': heading.id },
    h('div', { class: 'card-head' }, heading, h('div', { class: 'actions' }, regenerate, addKey, add)),
    note,
    slot,
    list,
  );
}
