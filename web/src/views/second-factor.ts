import * as api from '../api.js';
import { secondFactorPasskeyOptions, verifyLogin, verifyLoginWithPasskey } from '../api-mfa.js';
import { codeField } from '../code-field.js';
import { h } from '../dom.js';
import { FormController, onClickOnce } from '../forms.js';
import { ceremonyMessage, getAssertion, webauthnAvailable } from '../webauthn.js';

/** A wrong code dies the `mfa_token` after this many (contract §12.6); the page then starts over. */
const MAX_FAILURES = 5;

export interface SecondFactorOptions {
  readonly challenge: api.MfaChallenge;
  readonly onGrant: (grant: api.SessionGrant, recoveryCodesLeft: number | null) => void;
  /** Back to the password, saying why (the token died, or the person chose to). */
  readonly onRestart: (reason: string | null) => void;
}

/**
 * The second step of a login answered `mfa_required` (contract §12.4). The `mfa_token` lives in
 * this closure only: never in storage, the URL or the DOM, and it is dropped with the form. The
 * server answers every failure alike, so the page counts them and watches the token's lifetime to
 * send the person back to the password instead of letting them type codes into a dead token.
 */
export function secondFactorForm(options: SecondFactorOptions): HTMLFormElement {
  const { challenge } = options;
  const deadline = Date.now() + challenge.expiresIn * 1000;
  const code = codeField(challenge.methods.includes('totp'));
  const submit = h('button', { type: 'submit', class: 'button button-primary button-block' }, 'Verify');
  const back = h('button', { type: 'button', class: 'button button-quiet button-block' }, 'Start over');
  const passkey = h('button', { type: 'button', class: 'button button-block' }, 'Use a passkey');
  const usePasskey = challenge.methods.includes('webauthn') && webauthnAvailable();
  const form = h('form', { class: 'stack' }, usePasskey ? passkey : null, code.element, submit, back);
  const controller = new FormController(form, { code }, submit);
  let failures = 0;
  back.addEventListener('click', () => options.onRestart(null));
  // The passkey's options spend none of the token's attempts; a failed assertion spends one.
  onClickOnce(passkey, async () => {
    controller.clear();
    try {
      const { options: request } = await secondFactorPasskeyOptions(challenge.token);
      const grant = await verifyLoginWithPasskey(challenge.token, await getAssertion(request));
      options.onGrant(grant, null);
    } catch (error) {
      const message = ceremonyMessage(error);
      if (message !== null) controller.showAlert(message);
      else if (error instanceof api.ApiError && error.code === 'invalid_credentials') {
        failures += 1;
        if (failures >= MAX_FAILURES) options.onRestart('Too many failed attempts. Please log in again.');
        else controller.showAlert('That passkey was not accepted. Use one added to this account, or a code.');
      } else controller.fail(error);
    }
  });
  controller.onSubmit('Verifying…', async () => {
    if (Date.now() >= deadline) {
      options.onRestart('The time for the second step ran out. Please log in again.');
      return;
    }
    const empty = code.method === 'totp' ? 'Enter the six-digit code.' : 'Enter a recovery code.';
    if (!controller.check({ code: code.value === '' ? empty : null })) return;
    try {
      const grant = await verifyLogin(challenge.token, code.method, code.value);
      options.onGrant(grant, grant.recovery_codes_remaining ?? null);
    } catch (error) {
      if (!(error instanceof api.ApiError && error.code === 'invalid_credentials')) throw error;
      failures += 1;
      if (failures >= MAX_FAILURES) {
        options.onRestart('Too many wrong codes. Please log in again.');
        return;
      }
      code.clear();
      controller.check({
        code: code.method === 'totp' ? 'That code is not right. Check the app shows the code for this account, and try the current one.' : 'That recovery code is not right, or it was already used.',
      });
    }
  });
  return form;
}
