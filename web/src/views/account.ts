import * as api from '../api.js';
import { changeEmail, mailOn } from '../api-email.js';
import { confirmAction } from '../confirm.js';
import { h } from '../dom.js';
import { describeError } from '../format.js';
import { FormController, textField } from '../forms.js';
import { notify } from '../notices.js';
import { authed } from '../session.js';
import { mfaCard } from './mfa-card.js';
import { pageHead } from './parts.js';
import { sessionsCard } from './sessions.js';
import type { View } from './view.js';

const WRONG_PASSWORD = 'This is not your current password.';

/** A wrong password is a 401 that leaves the session alone (see authed). */
const isWrongPassword = (error: unknown): boolean => error instanceof api.ApiError && error.code === 'invalid_credentials';

/** "3 API tokens", "1 app", "no sessions". */
const count = (n: number, one: string, many = `${one}s`): string => `${n === 0 ? 'no' : n} ${n === 1 ? one : many}`;

/** Changing the password, which signs out every other session. */
function passwordCard(onChanged: () => Promise<void>): HTMLElement {
  const current = textField({ label: 'Current password', name: 'current_password', type: 'password', autocomplete: 'current-password', required: true });
  const next = textField({
    label: 'New password',
    name: 'new_password',
    type: 'password',
    autocomplete: 'new-password',
    required: true,
    hint: 'At least 15 characters; common and breached passwords are refused. Every other session is signed out.',
  });
  const submit = h('button', { type: 'submit', class: 'button button-primary' }, 'Change password');
  const form = h('form', { class: 'stack' }, current.element, next.element, h('div', { class: 'actions' }, submit));
  const controller = new FormController(form, { current_password: current, new_password: next }, submit);
  controller.onSubmit('Changing…', async () => {
    const ok = controller.check({
      current_password: current.value === '' ? 'Enter your current password.' : null,
      new_password: next.value === '' ? 'Choose a new password.' : null,
    });
    if (!ok) return;
    try {
      await authed((jwt) => api.changePassword(jwt, { current_password: current.value, new_password: next.value }));
    } catch (error) {
      if (!isWrongPassword(error)) throw error;
      controller.check({ current_password: WRONG_PASSWORD });
      return;
    }
    form.reset();
    notify('success', 'Password changed. Every other session has been signed out.');
    await onChanged();
  });
  return h('section', { class: 'card', 'aria-label': 'Change password' }, h('h2', {}, 'Change password'), form);
}

/**
 * Changing the email: a link goes to the new address and nothing changes until it is opened. The
 * API answers alike whether or not the address is taken (contract §11.4), and so does the page.
 */
function emailCard(currentEmail: string): HTMLElement {
  const email = textField({ label: 'New email', name: 'email', type: 'email', autocomplete: 'email', required: true, spellcheck: false });
  const password = textField({ label: 'Password', name: 'password', type: 'password', autocomplete: 'current-password', required: true, hint: 'To confirm it is you.' });
  const submit = h('button', { type: 'submit', class: 'button button-primary' }, 'Change email');
  const form = h('form', { class: 'stack' }, email.element, password.element, h('div', { class: 'actions' }, submit));
  const controller = new FormController(form, { email, password }, submit);
  controller.onSubmit('Sending…', async () => {
    const ok = controller.check({ email: email.value.trim() === '' ? 'Enter the new email.' : null, password: password.value === '' ? 'Enter your password.' : null });
    if (!ok) return;
    const address = email.value.trim();
    try {
      await authed((jwt) => changeEmail(jwt, address, password.value));
    } catch (error) {
      if (!isWrongPassword(error)) throw error;
      controller.check({ password: 'This is not your password.' });
      return;
    }
    form.reset();
    notify('success', `A link to confirm the change is on its way to ${address}, if that address can be used. Your email stays ${currentEmail} until the link is opened.`);
  });
  return h(
    'section',
    { class: 'card', 'aria-label': 'Change email' },
    h('h2', {}, 'Change email'),
    h('p', { class: 'card-note' }, `Your email is ${currentEmail}. We mail a link to the new address, and a notice to this one.`),
    form,
  );
}

/** What deleting the account destroys, counted, so the confirmation can name it. */
async function whatIsLost(): Promise<string> {
  const [tokens, apps, sessions] = await Promise.all([
    authed((jwt) => api.listTokens(jwt)),
    authed((jwt) => api.listApps(jwt)),
    authed((jwt) => api.listSessions(jwt)),
  ]);
  return `${count(tokens.tokens.length, 'API token')}, ${count(apps.apps.length, 'app')} with all their app tokens, and ${count(sessions.sessions.length, 'session')}`;
}

/** Deleting the account, after the password and a confirmation that names what goes with it. */
function deleteCard(username: string, onDeleted: () => void): HTMLElement {
  const password = textField({ label: 'Password', name: 'password', type: 'password', autocomplete: 'current-password', required: true, hint: 'To confirm it is you.' });
  const submit = h('button', { type: 'submit', class: 'button button-danger' }, 'Delete account…');
  const form = h('form', { class: 'stack' }, password.element, h('div', { class: 'actions' }, submit));
  const controller = new FormController(form, { password }, submit);
  controller.onSubmit('Deleting…', async () => {
    if (!controller.check({ password: password.value === '' ? 'Enter your password.' : null })) return;
    const lost = await whatIsLost();
    const yes = await confirmAction({
      title: `Delete the account “${username}”?`,
      body: `This deletes ${lost}. Everything using them stops working at once. This cannot be undone.`,
      confirm: 'Delete my account',
    });
    if (!yes) return;
    try {
      await authed((jwt) => api.deleteAccount(jwt, password.value));
    } catch (error) {
      if (!isWrongPassword(error)) throw error;
      controller.check({ password: 'This is not your password.' });
      return;
    }
    onDeleted();
  });
  return h(
    'section',
    { class: 'card card-danger', 'aria-label': 'Delete account' },
    h('h2', {}, 'Delete account'),
    h('p', { class: 'card-note' }, 'Deletes your account with every API token, app, app token and session. Your username and email become free for anyone to use.'),
    form,
  );
}

/** The Account screen: password, email (when this server sends mail), two-step login, sessions, deletion. */
export function accountView(user: api.User, onDeleted: () => void): View {
  const heading = h('h1', {}, 'Account');
  const sessions = sessionsCard();
  void sessions.refresh().catch((error: unknown) => notify('error', describeError(error)));
  const element = h(
    'section',
    { class: 'screen' },
    pageHead(heading, `Signed in as ${user.username} (${user.email}).`, null),
    passwordCard(() => sessions.refresh()),
    mailOn() ? emailCard(user.email) : null,
    mfaCard(user.username),
    sessions.element,
    deleteCard(user.username, onDeleted),
  );
  return { element, heading };
}
