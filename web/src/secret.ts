import { h, replace, uid, type Child } from './dom.js';

export interface SecretOptions {
  /** The panel's heading, e.g. "Your new API token". */
  readonly title: string;
  /** The accessible name of the read-only field holding the value. */
  readonly label: string;
  readonly value: string;
  readonly details?: Child;
  /** What follows "you will not see this again"; by default, what holds for a token. */
  readonly warning?: string;
  /** Called when the person dismisses the panel; the value is then gone from the page. */
  readonly onDone: () => void;
}

const TOKEN_WARNING = 'rz-auth keeps only a fingerprint of it. If it is lost, revoke it and create a new one.';

async function copyText(input: HTMLInputElement): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(input.value);
    return true;
  } catch {
    // No Clipboard API (plain http on a non-local host) or permission refused: select and copy.
    input.select();
    return document.execCommand('copy');
  }
}

/**
 * Shows a newly created token once, with a copy button and a clear warning. The value lives only in
 * this panel's input: dismissing the panel drops it, and the server never returns it again.
 */
function secretPanel(options: SecretOptions): HTMLElement {
  const heading = h('h2', { id: uid('secret'), tabindex: -1 }, options.title);
  const input = h('input', {
    type: 'text',
    class: 'secret-value',
    readonly: true,
    'aria-label': options.label,
    spellcheck: 'false',
    autocomplete: 'off',
  });
  const status = h('span', { class: 'copy-status', role: 'status' });
  const copy = h('button', { type: 'button', class: 'button button-primary' }, 'Copy');
  const done = h('button', { type: 'button', class: 'button' }, 'Done, I have stored it safely');
  const panel = h(
    'section',
    { class: 'secret', 'aria-labelledby': heading.id },
    heading,
    h('p', { class: 'secret-warning' }, h('strong', {}, 'Copy it now: you will not see this again.'), ` ${options.warning ?? TOKEN_WARNING}`),
    h('div', { class: 'secret-row' }, input, copy),
    status,
    options.details,
    h('div', { class: 'actions' }, done),
  );
  input.value = options.value;
  input.addEventListener('focus', () => input.select());
  copy.addEventListener('click', () => {
    void copyText(input).then((ok) => {
      status.textContent = ok ? 'Copied to the clipboard.' : 'Could not copy: select the value and copy it yourself.';
    });
  });
  done.addEventListener('click', () => {
    input.value = '';
    panel.remove();
    options.onDone();
  });
  return panel;
}

/** Shows a secret's panel in `slot`, in place of whatever was there, and moves focus to its heading. */
export function showSecret(slot: HTMLElement, options: SecretOptions): void {
  const panel = secretPanel(options);
  replace(slot, panel);
  panel.querySelector('h2')?.focus();
}
