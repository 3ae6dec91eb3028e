import * as api from '../api.js';
import { loginWithPasskey, passkeyLoginOptions } from '../api-mfa.js';
import { h } from '../dom.js';
import { describeError } from '../format.js';
import { onClickOnce } from '../forms.js';
import { ceremonyMessage, conditionalAvailable, getAssertion, webauthnAvailable } from '../webauthn.js';

/** A challenge works for 5 minutes (contract §12.5): the waiting autofill request takes a new one before. */
const RENEW_MS = 4 * 60_000;

export interface PasskeyLogin {
  /** "Sign in with a passkey"; hidden where the browser has no WebAuthn. */
  readonly button: HTMLButtonElement;
  /** Starts offering passkeys in the username field's autofill, where the browser can. */
  offer(): void;
  /** Ends the waiting autofill request: the person logs in with the password, or left. */
  stop(): void;
}

/**
 * Logging in with a passkey and no password (contract §12.5, §12.9): the button asks at once; the
 * username field's autofill (conditional mediation, WebAuthn §5.1.4) offers passkeys while the
 * login form shows, under request options renewed before their challenge dies.
 */
export function passkeyLogin(onGrant: (grant: api.SessionGrant) => void, showAlert: (message: string) => void): PasskeyLogin {
  const button = h('button', { type: 'button', class: 'button button-block', hidden: !webauthnAvailable() }, 'Sign in with a passkey');
  let waiting: AbortController | null = null;
  let renew: number | undefined;

  const stop = () => {
    window.clearTimeout(renew);
    waiting?.abort();
    waiting = null;
  };

  const failed = (error: unknown) => {
    if (error instanceof api.ApiError && error.code === 'invalid_credentials') showAlert('That passkey is not one rz-auth knows. Log in with your password, or use another passkey.');
    else if (error instanceof api.ApiError && error.code === 'forbidden') showAlert('This server does not offer passkeys. Log in with your password.');
    else showAlert(ceremonyMessage(error) ?? describeError(error));
  };

  const signIn = async (signal?: AbortSignal) => {
    const { challenge_id: id, options } = await passkeyLoginOptions();
    const credential = await getAssertion(options, signal, signal !== undefined);
    onGrant(await loginWithPasskey(id, credential));
  };

  const offer = () => {
    stop();
    const round = new AbortController();
    waiting = round;
    void conditionalAvailable().then((available) => {
      if (!available || round.signal.aborted) return;
      renew = window.setTimeout(offer, RENEW_MS);
      signIn(round.signal).then(stop, (error: unknown) => {
        // Only a pick the server refused is told: the offer is silent, and absent where passkeys are off.
        if (round.signal.aborted || !(error instanceof api.ApiError && error.code === 'invalid_credentials')) return;
        failed(error);
        offer();
      });
    });
  };

  onClickOnce(button, async () => {
    stop();
    try {
      await signIn();
    } catch (error) {
      failed(error);
      offer();
    }
  });
  // Leaving the login screen ends the request: it would otherwise keep the autofill offer alive.
  window.addEventListener('hashchange', stop, { once: true });
  return { button, offer, stop };
}
