import { ApiError } from './api.js';
import { listFactors, reauth, reauthPasskeyOptions, type ReauthBody } from './api-mfa.js';
import { codeField } from './code-field.js';
import { h, uid } from './dom.js';
import { FormController, onClickOnce, textField, type FieldView } from './forms.js';
import { ceremonyMessage, getAssertion, webauthnAvailable } from './webauthn.js';

/** What the dialog asks for: the password without a second factor, else a code (contract §12.5). */
interface Proof {
  readonly field: FieldView & { readonly element: HTMLElement };
  readonly body: () => ReauthBody | null;
  readonly empty: string;
  readonly wrong: () => string;
}

function passwordProof(): Proof {
  const password = textField({ label: 'Password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  return {
    field: password,
    body: () => (password.value === '' ? null : { password: password.value }),
    empty: 'Enter your password.',
    wrong: () => 'This is not your password.',
  };
}

function codeProof(totp: boolean): Proof {
  const code = codeField(totp);
  return {
    field: code,
    body: () => (code.value === '' ? null : { method: code.method, code: code.value }),
    empty: 'Enter a code.',
    wrong: () => {
      code.clear();
      return code.method === 'totp' ? 'That code is not right. Try the current one.' : 'That recovery code is not right, or it was already used.';
    },
  };
}

/**
 * The answer to `insufficient_user_authentication` (RFC 9470): a modal dialog that asks the person
 * to prove it is them again and resolves with the new user token POST /api/auth/reauth issues for
 * the same session, or null when they cancel. A wrong password or code keeps the dialog open; a
 * session that ended meanwhile rejects with its 401 (session.ts then returns to the login screen).
 */
export async function reauthenticate(jwt: string): Promise<string | null> {
  const { factors, recovery_codes_remaining: codesLeft } = await listFactors(jwt);
  const proof = factors.length === 0 ? passwordProof() : codeProof(factors.some((f) => f.type === 'totp') || codesLeft === 0);
  const usePasskey = factors.some((f) => f.type === 'webauthn') && webauthnAvailable();
  const title = h('h2', { id: uid('reauth-title') }, 'Confirm it is you');
  const body = h(
    'p',
    { id: uid('reauth-body') },
    factors.length === 0
      ? 'This action needs a recent login. Enter your password to go on.'
      : `This action needs a recent login. ${usePasskey ? 'Use your passkey, or enter' : 'Enter'} a code from your second factor to go on.`,
  );
  const cancel = h('button', { type: 'button', class: 'button' }, 'Cancel');
  const submit = h('button', { type: 'submit', class: 'button button-primary' }, 'Confirm');
  const passkey = h('button', { type: 'button', class: 'button' }, 'Use a passkey');
  const form = h('form', { class: 'stack' }, usePasskey ? passkey : null, proof.field.element, h('div', { class: 'dialog-actions' }, cancel, submit));
  const controller = new FormController(form, { proof: proof.field }, submit);
  const dialog = h('dialog', { class: 'dialog', 'aria-labelledby': title.id, 'aria-describedby': body.id }, title, body, form);
  return new Promise((resolve, reject) => {
    let token: string | null = null;
    cancel.addEventListener('click', () => dialog.close('cancel'));
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(token);
    });
    /** Confirms with `proven`; false when it was refused. A session that ended meanwhile rejects. */
    const confirm = async (proven: ReauthBody): Promise<boolean> => {
      try {
        token = (await reauth(jwt, proven)).token;
        dialog.close('confirm');
        return true;
      } catch (error) {
        if (error instanceof ApiError && error.code === 'invalid_credentials') return false;
        if (!(error instanceof ApiError && error.status === 401)) throw error;
        dialog.remove();
        reject(error);
        return true;
      }
    };
    controller.onSubmit('Confirming…', async () => {
      const proven = proof.body();
      if (proven === null) controller.check({ proof: proof.empty });
      else if (!(await confirm(proven))) controller.check({ proof: proof.wrong() });
    });
    onClickOnce(passkey, async () => {
      controller.clear();
      try {
        const credential = await getAssertion((await reauthPasskeyOptions(jwt)).options);
        if (!(await confirm({ method: 'webauthn', credential }))) controller.showAlert('That passkey was not accepted. Use one added to your account, or a code.');
      } catch (error) {
        const message = ceremonyMessage(error);
        if (message !== null) controller.showAlert(message);
        else if (!(error instanceof ApiError && error.status === 401)) controller.fail(error);
        else {
          dialog.remove();
          reject(error);
        }
      }
    });
    document.body.append(dialog);
    dialog.showModal();
    proof.field.focusTarget.focus();
  });
}
