import { h, uid } from './dom.js';

export interface ConfirmOptions {
  readonly title: string;
  readonly body: string;
  /** The label of the destructive button, e.g. "Revoke token". */
  readonly confirm: string;
}

/**
 * Asks before a destructive action in a modal <dialog>: focus starts on Cancel, Escape cancels,
 * and the browser returns focus to the button that opened it.
 */
export function confirmAction(options: ConfirmOptions): Promise<boolean> {
  const title = h('h2', { id: uid('confirm-title') }, options.title);
  const body = h('p', { id: uid('confirm-body') }, options.body);
  const cancel = h('button', { type: 'button', class: 'button', autofocus: true }, 'Cancel');
  const ok = h('button', { type: 'button', class: 'button button-danger' }, options.confirm);
  const dialog = h(
    'dialog',
    { class: 'dialog', 'aria-labelledby': title.id, 'aria-describedby': body.id },
    title,
    body,
    h('div', { class: 'dialog-actions' }, cancel, ok),
  );
  return new Promise((resolve) => {
    cancel.addEventListener('click', () => dialog.close('cancel'));
    ok.addEventListener('click', () => dialog.close('confirm'));
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(dialog.returnValue === 'confirm');
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}
