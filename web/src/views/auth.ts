import * as api from '../api.js';
import { mailOn, requestPasswordReset } from '../api-email.js';
import { h } from '../dom.js';
import { FormController, textField } from '../forms.js';
import type { View } from './view.js';

const required = (value: string, message: string) => (value.trim() === '' ? message : null);

/** Email and password; on success the caller starts the session. */
export function loginView(onGrant: (grant: api.SessionGrant) => void): View {
  const heading = h('h1', { id: 'login-heading' }, 'Log in');
  const email = textField({ label: 'Email', name: 'email', type: 'email', autocomplete: 'username', required: true, spellcheck: false });
  const password = textField({ label: 'Password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const submit = h('button', { type: 'submit', class: 'button button-primary button-block' }, 'Log in');
  const form = h('form', { class: 'stack', 'aria-labelledby': heading.id }, email.element, password.element, submit);
  const controller = new FormController(form, { email, password }, submit);
  controller.onSubmit('Logging in…', async () => {
    const ok = controller.check({ email: required(email.value, 'Enter your email.'), password: required(password.value, 'Enter your password.') });
    if (!ok) return;
    onGrant(await api.login({ email: email.value.trim(), password: password.value }));
  });
  const element = h(
    'section',
    { class: 'auth' },
    h('div', { class: 'card auth-card' }, heading, h('p', { class: 'lede' }, 'Manage your API tokens and apps.'), form),
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
