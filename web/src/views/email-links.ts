import * as api from '../api.js';
import * as mail from '../api-email.js';
import { h, replace } from '../dom.js';
import { describeError } from '../format.js';
import { FormController, textField } from '../forms.js';
import type { EmailLink } from '../links.js';
import { currentSession } from '../session.js';
import type { View } from './view.js';

/*
 * The screens a mail's link opens (contract §11.4): set a new password, verify the address, confirm
 * a new address. The token came from the fragment (links.ts) and is sent once, in a POST body.
 */

/** Why a link failed, as the person can act on it; null when the failure is not about the link. */
function linkFailure(error: unknown, again: string): string | null {
  if (!(error instanceof api.ApiError)) return null;
  if (error.code === 'invalid_link') return `This link cannot be used: it is incomplete, has expired, or was already used. ${again}`;
  // With mail turned off since the mail was sent, the link routes are gone.
  if (error.status === 404) return 'This link cannot be used: this server no longer sends mail.';
  return null;
}

/** A link screen's frame: a card like the login one, and a way back to the page. */
function linkCard(heading: HTMLElement, lede: string, ...body: HTMLElement[]): HTMLElement {
  return h('section', { class: 'auth' }, h('div', { class: 'card auth-card' }, heading, h('p', { class: 'lede' }, lede), ...body));
}

/** Where a finished link screen leads: the page for a signed-in tab, the login screen otherwise. */
const onwards = (signedIn: boolean): HTMLElement =>
  h('p', { class: 'auth-switch' }, signedIn ? h('a', { href: '#tokens' }, 'Continue to your API tokens') : h('a', { href: '#login' }, 'Log in'));

/** `#reset=<token>`: a new password; every session of the account ends (the caller forgets this tab's). */
export function resetView(link: EmailLink, onReset: () => void): View {
  const heading = h('h1', { id: 'reset-heading' }, 'Choose a new password');
  const password = textField({
    label: 'New password',
    name: 'new_password',
    type: 'password',
    autocomplete: 'new-password',
    required: true,
    hint: 'At least 15 characters; common and breached passwords are refused. Every session of your account is signed out; your API tokens and app tokens keep working.',
  });
  const submit = h('button', { type: 'submit', class: 'button button-primary button-block' }, 'Set new password');
  const form = h('form', { class: 'stack', 'aria-labelledby': heading.id }, password.element, submit);
  const controller = new FormController(form, { new_password: password }, submit);
  const status = h('div', {});
  controller.onSubmit('Setting…', async () => {
    if (!controller.check({ new_password: password.value === '' ? 'Choose a new password.' : null })) return;
    try {
      await mail.resetPassword(link.token, password.value);
    } catch (error) {
      const failure = linkFailure(error, 'Ask for a new one below.');
      if (failure === null) throw error;
      form.hidden = true;
      replace(status, failed(failure), h('p', { class: 'auth-switch' }, h('a', { href: '#forgot' }, 'Ask for a new link')));
      return;
    }
    onReset();
  });
  return { element: linkCard(heading, 'Set the password you will log in with from now on.', form, status), heading };
}

/** An alert that takes focus, so a screen reader reads why the link failed at once. */
function failed(text: string): HTMLElement {
  const alert = h('div', { class: 'form-error', role: 'alert', tabindex: -1 }, text);
  queueMicrotask(() => alert.focus());
  return alert;
}

/** The words of each confirmation: its heading, what it says while it runs, when done, and how to get a new link. */
const CONFIRMATIONS = {
  'verify-email': {
    heading: 'Verify your email address',
    busy: 'Verifying your email address…',
    done: 'Your email address is verified.',
    again: 'Log in and choose “Send again” at the top of the page for a new link.',
    confirm: mail.verifyEmail,
  },
  'confirm-email': {
    heading: 'Confirm your new email address',
    busy: 'Changing your email address…',
    done: 'Your email address has been changed. Every other session of your account has been signed out.',
    again: 'Ask for the change again under Account.',
    confirm: mail.confirmEmailChange,
  },
} as const;

/**
 * `#verify-email=<token>` and `#confirm-email=<token>`: confirmed as soon as the screen opens (the
 * person opened the link from their mail, which is the proof asked for). `onConfirmed` refreshes
 * what this tab knows and says whether it is still signed in.
 */
export function confirmView(link: EmailLink & { kind: keyof typeof CONFIRMATIONS }, onConfirmed: () => Promise<boolean>): View {
  const words = CONFIRMATIONS[link.kind];
  const heading = h('h1', {}, words.heading);
  const status = h('div', { class: 'stack', role: 'status' }, h('p', {}, words.busy));
  const run = async () => {
    try {
      await words.confirm(link.token);
    } catch (error) {
      replace(status, failed(linkFailure(error, words.again) ?? describeError(error)), onwards(currentSession() !== null));
      return;
    }
    const signedIn = await onConfirmed();
    replace(status, h('p', { class: 'confirmed' }, words.done), onwards(signedIn));
  };
  void run();
  return { element: linkCard(heading, 'This link came in a mail from this server.', status), heading };
}
