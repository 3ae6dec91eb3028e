import { h, uid } from './dom.js';
import { scopePicker } from './scope-picker.js';

/**
 * Asks which scopes a new app token should carry, in a modal <dialog>: focus starts on Cancel,
 * Escape cancels. Resolves with the names chosen (possibly none), or null when cancelled.
 */
export function chooseAppTokenScopes(title: string): Promise<string[] | null> {
  const heading = h('h2', { id: uid('scopes-title') }, title);
  const picker = scopePicker('app_token', 'Scopes', 'Platform scopes the new token may carry. With none it can call GET /api/me and read its own app.');
  const cancel = h('button', { type: 'button', class: 'button', autofocus: true }, 'Cancel');
  const issue = h('button', { type: 'button', class: 'button button-primary' }, 'Issue token');
  const dialog = h('dialog', { class: 'dialog', 'aria-labelledby': heading.id }, heading, picker.element, h('div', { class: 'dialog-actions' }, cancel, issue));
  return new Promise((resolve) => {
    cancel.addEventListener('click', () => dialog.close('cancel'));
    issue.addEventListener('click', () => dialog.close('issue'));
    dialog.addEventListener('close', () => {
      const chosen = picker.value();
      dialog.remove();
      resolve(dialog.returnValue === 'issue' ? chosen : null);
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}
