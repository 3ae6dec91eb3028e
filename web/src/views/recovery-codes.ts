import { h, uid } from '../dom.js';

const FILE_NAME = 'rz-auth-recovery-codes.txt';

/** The codes as a text file a person keeps: where they are for, and one code a line. */
function download(codes: readonly string[], account: string): void {
  const text = [`rz-auth recovery codes for ${account}`, 'Each code works once, in place of your authenticator app.', '', ...codes, ''].join('\n');
  const url = URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }));
  const link = h('a', { href: url, download: FILE_NAME, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  // The click has started the download; the object URL is no longer needed once it has run.
  window.setTimeout(() => URL.revokeObjectURL(url), 0);
}

const PANEL = 'recovery-codes-panel';
/** Leaving the page while codes are shown and not confirmed asks first: they cannot be shown again. */
window.addEventListener('beforeunload', (event) => {
  if (document.querySelector(`section.${PANEL}`) !== null) event.preventDefault();
});

/**
 * A new set of recovery codes, shown once (contract §12.3): the list, a download as a text file,
 * and "I have saved them" to tick before the panel can be dismissed. Like a token's value it stays
 * when the session ends or the person moves to another screen (main.ts), until dismissed.
 */
export function recoveryCodesPanel(codes: readonly string[], account: string, onDone: () => void): HTMLElement {
  const heading = h('h2', { id: uid('codes'), tabindex: -1 }, 'Your recovery codes');
  const list = h('ol', { class: 'recovery-codes' }, ...codes.map((code) => h('li', {}, h('code', {}, code))));
  const save = h('button', { type: 'button', class: 'button button-primary' }, 'Download as a text file');
  const checkId = uid('saved');
  const saved = h('input', { type: 'checkbox', id: checkId });
  const error = h('p', { class: 'field-error', id: uid('saved-error'), hidden: true }, 'Tick this first: the codes cannot be shown again.');
  const done = h('button', { type: 'button', class: 'button' }, 'Done');
  const panel = h(
    'section',
    { class: `secret ${PANEL}`, 'aria-labelledby': heading.id },
    heading,
    h(
      'p',
      { class: 'secret-warning' },
      h('strong', {}, 'Save them now: you will not see them again.'),
      ' Each code logs you in once if you lose your authenticator app. Keep them apart from your password, in a password manager or on paper.',
    ),
    list,
    h('div', { class: 'actions' }, save),
    h('div', { class: 'check' }, saved, h('label', { for: checkId }, 'I have saved these codes somewhere safe')),
    error,
    h('div', { class: 'actions' }, done),
  );
  save.addEventListener('click', () => download(codes, account));
  saved.addEventListener('change', () => {
    error.hidden = true;
    saved.removeAttribute('aria-invalid');
  });
  done.addEventListener('click', () => {
    if (!saved.checked) {
      error.hidden = false;
      saved.setAttribute('aria-invalid', 'true');
      saved.setAttribute('aria-describedby', error.id);
      saved.focus();
      return;
    }
    list.replaceChildren();
    panel.remove();
    onDone();
  });
  return panel;
}
