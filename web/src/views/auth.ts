import * as api from '../api.js';
import { mailOn, requestPasswordReset } from '../api-email.js';
import { h } from '../dom.js';
import { FormController, textField } from '../forms.js';
import { notify } from '../notices.js';
import { passkeyLogin } from './passkey-login.js';
import { secondFactorForm } from './second-factor.js';
import type { View } from './view.js';

const required = (value: string, message: string) => (value.trim() === '' ? message : null);

const LOGIN_LEDE = 'Manage your API tokens and apps.';

/** "You used a recovery code: 3 left." once the screen after the login shows. */
function recoveryNotice(left: number): void {
  const more = left <= 3 ? ' Make a new set on the Account screen soon.' : '';
  notify('info', `You logged in with a recovery code; it no longer works. ${left === 1 ? '1 code is' : `${left} codes are`} left.${more}`);
}

/**
 * Email and password, then, for an account with a second factor, its code in the same card
 * (views/second-factor.ts); on success the caller starts the session. `intro` says what the
 * login is for when it is not the page itself (the /device screen).
 */
export function loginView(onGrant: (grant: api.SessionGrant) => void, intro = LOGIN_LEDE): View {
  const heading = h('h1', { id: 'login-heading' }, 'Log in');
  const lede = h('p', { class: 'lede' }, intro);
  // `webauthn` lets the browser offer passkeys in this field's autofill (WebAuthn §5.1.4).
  const email = textField({ label: 'Email', name: 'email', type: 'email', autocomplete: 'username webauthn', required: true, spellcheck: false });
  const password = textField({ label: 'Password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const submit = h('button', { type: 'submit', class: 'button button-primary button-block' }, 'Log in');
  const form = h('form', { class: 'stack', 'aria-labelledby': heading.id }, email.element, password.element, submit);
  const controller = new FormController(form, { email, password }, submit);
  const passkey = passkeyLogin(onGrant, (message) => {
    controller.clear();
    controller.showAlert(message);
    controller.alert.focus();
  });
  const card = h('div', { class: 'card auth-card' }, heading, lede, form, passkey.button);
  const restart = (reason: string | null) => {
    heading.textContent = 'Log in';
    lede.textContent = intro;
    password.control.value = '';
    card.replaceChildren(heading, lede, form, passkey.button);
    if (reason !== null) controller.showAlert(reason);
    password.control.focus();
    passkey.offer();
  };
  const secondStep = (challenge: api.MfaChallenge) => {
    heading.textContent = 'Two-step verification';
    lede.textContent = 'Your password was right. Now confirm it is you with your second factor.';
    const step = secondFactorForm({
      challenge,
      onGrant: (grant, left) => {
        onGrant(grant);
        if (left !== null) recoveryNotice(left);
      },
      onRestart: restart,
    });
    step.setAttribute('aria-labelledby', heading.id);
    card.replaceChildren(heading, lede, step);
    step.querySelector<HTMLInputElement>('input:not([hidden] input)')?.focus();
  };
  controller.onSubmit('Logging in…', async () => {
    const ok = controller.check({ email: required(email.value, 'Enter your email.'), password: required(password.value, 'Enter your password.') });
    if (!ok) return;
    passkey.stop();
    try {
      onGrant(await api.login({ email: email.value.trim(), password: password.value }));
    } catch (error) {
      if (!(error instanceof api.ApiError && error.mfa !== null)) {
        passkey.offer(); // A wrong password: the passkey stays on offer.
        throw error;
      }
      secondStep(error.mfa);
    }
  });
  passkey.offer();
  const element = h(
    'section',
    { class: 'auth' },
    card,
    // Only a server that sends mail can send a reset link (contract §11.2).
    mailOn() ? h('p', { class: 'auth-switch' }, h('a', { href: '#forgot' }, 'Forgot password?')) : null,
    h('p', { class: 'auth-switch' }, 'New here? ', h('a', { href: '#signup' }, 'Create an account')),
  );
  return { element, heading };
}

/** Email, username and password; signup logs the person in at once. */
export function signupView(onGrant: (grant: api.SessionGrant) => void): View {
  const heading = h('h1', { id: 'signup-heading' }, 'Create an account');
  const email = textField({ label: 'Email', name: 'email', type: 'email', autocomplete: 'email', required: true, spellcheck: false });
  const username = textField({
    label: 'Username',
    name: 'username',
    autocomplete: 'username',
    required: true,
    spellcheck: false,
    hint: '3 to 39 letters, digits, hyphens or underscores.',
  });
  const password = textField({
    label: 'Password',
    name: 'password',
    type: 'password',
    autocomplete: 'new-password',
    required: true,
    hint: 'A long passphrase is best: at least 15 characters. Common and breached passwords are refused.',
  });
  const submit = h('button', { type: 'submit', class: 'button button-primary button-block' }, 'Create account');
  const form = h('form', { class: 'stack', 'aria-labelledby': heading.id }, email.element, username.element, password.element, submit);
  const controller = new FormController(form, { email, username, password }, submit);
  controller.onSubmit('Creating your account…', async () => {
    const ok = controller.check({
      email: required(email.value, 'Enter your email.'),
      username: required(username.value, 'Choose a username.'),
      password: required(password.value, 'Choose a password.'),
    });
    if (!ok) return;
    onGrant(await api.signup({ email: email.value.trim(), username: username.value.trim(), password: password.value }));
  });
  const element = h(
    'section',
    { class: 'auth' },
    h('div', { class: 'card auth-card' }, heading, h('p', { class: 'lede' }, 'Get API tokens for your scripts and register your apps.'), form),
    h('p', { class: 'auth-switch' }, 'Already have an account? ', h('a', { href: '#login' }, 'Log in')),
  );
  return { element, heading };
}

/**
 * Asks for a reset link. The answer is the same whether or not an account uses the address (the
 * API answers alike, contract §11.4), so the page says the same thing either way.
 */
export function forgotView(): View {
  const heading = h('h1', { id: 'forgot-heading' }, 'Reset your password');
  const email = textField({ label: 'Email', name: 'email', type: 'email', autocomplete: 'username', required: true, spellcheck: false });
  const submit = h('button', { type: 'submit', class: 'button button-primary button-block' }, 'Send reset link');
  const form = h('form', { class: 'stack', 'aria-labelledby': heading.id }, email.element, submit);
  const controller = new FormController(form, { email }, submit);
  const sent = h('p', { class: 'confirmed', role: 'status' });
  controller.onSubmit('Sending…', async () => {
    if (!controller.check({ email: required(email.value, 'Enter your email.') })) return;
    const address = email.value.trim();
    sent.textContent = '';
    await requestPasswordReset(address);
    sent.textContent = `If an account uses ${address}, a link to reset its password is on its way there. It works once, for a limited time; a newer link replaces it.`;
  });
  const element = h(
    'section',
    { class: 'auth' },
    h('div', { class: 'card auth-card' }, heading, h('p', { class: 'lede' }, 'We will mail you a link to choose a new password.'), form, sent),
    h('p', { class: 'auth-switch' }, 'Remembered it? ', h('a', { href: '#login' }, 'Log in')),
  );
  return { element, heading };
}
