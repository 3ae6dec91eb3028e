import type { CodeMethod } from './api-mfa.js';
import { h } from './dom.js';
import { textField, type FieldView, type TextField } from './forms.js';

/** A second factor's code: the authenticator app's, or a recovery code after "Use a recovery code". */
export interface CodeField extends FieldView {
  readonly element: HTMLDivElement;
  readonly method: CodeMethod;
  readonly value: string;
  /** Empties both inputs, e.g. after a wrong code, so the next one is typed fresh. */
  clear(): void;
}

/**
 * Both inputs exist and one shows at a time. The app's code is `autocomplete="one-time-code"` with
 * a numeric keypad; a recovery code has letters, so it gets a plain text input that no browser fills.
 * `totp` false (an account with recovery codes only) starts, and stays, on the recovery code.
 */
export function codeField(totp = true): CodeField {
  const app = textField({
    label: 'Code from your authenticator app',
    name: 'code',
    autocomplete: 'one-time-code',
    inputmode: 'numeric',
    spellcheck: false,
    required: true,
    hint: 'The six digits it shows for rz-auth now.',
  });
  const recovery = textField({
    label: 'Recovery code',
    name: 'recovery_code',
    spellcheck: false,
    required: true,
    hint: 'One of the codes you saved, like ABCD-EFGH-JKMN-PQRS. Each works once.',
  });
  let method: CodeMethod = totp ? 'totp' : 'recovery_code';
  const toggle = h('button', { type: 'button', class: 'button button-quiet button-small' });
  const active = (): TextField => (method === 'totp' ? app : recovery);
  const show = () => {
    app.element.hidden = method !== 'totp';
    recovery.element.hidden = method === 'totp';
    toggle.textContent = method === 'totp' ? 'Use a recovery code' : 'Use your authenticator app';
  };
  toggle.hidden = !totp;
  toggle.addEventListener('click', () => {
    active().setError(null);
    method = method === 'totp' ? 'recovery_code' : 'totp';
    show();
    active().control.focus();
  });
  show();
  return {
    element: h('div', { class: 'stack-small' }, app.element, recovery.element, h('div', {}, toggle)),
    get method() {
      return method;
    },
    get value() {
      return active().value.trim();
    },
    get focusTarget() {
      return active().control;
    },
    setError: (message) => active().setError(message),
    clear() {
      app.control.value = '';
      recovery.control.value = '';
    },
  };
}
