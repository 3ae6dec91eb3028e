import { ApiError } from '../api.js';
import { getMe, mailOn, sendVerification } from '../api-email.js';
import { byId, h, replace } from '../dom.js';
import { describeError } from '../format.js';
import { onClickOnce } from '../forms.js';
import { notify } from '../notices.js';
import { authed, SessionEnded, updateUser } from '../session.js';

/*
 * The banner at the top of every screen while the signed-in person's address is unverified
 * (GET /api/me `email_verified`), with "Send again". With mail off GET /api/me says false for
 * everyone and nothing can be verified, so there is no banner at all.
 */

const slot = (): HTMLDivElement => byId('banner', HTMLDivElement);

export const hideBanner = (): void => replace(slot());

function show(email: string): void {
  const status = h('p', { class: 'banner-status', role: 'status' });
  const again = h('button', { type: 'button', class: 'button' }, 'Send again');
  onClickOnce(again, async () => {
    status.textContent = '';
    try {
      await authed((jwt) => sendVerification(jwt));
      status.textContent = `A new link is on its way to ${email}. Links sent before it no longer work.`;
    } catch (error) {
      if (error instanceof SessionEnded) return;
      if (error instanceof ApiError && error.status === 409) {
        hideBanner();
        notify('success', 'Your email address is already verified.');
        return;
      }
      status.textContent = describeError(error);
    }
  });
  replace(
    slot(),
    h(
      'section',
      { class: 'banner', 'aria-label': 'Email address not verified' },
      h('p', {}, 'Your email address ', h('strong', {}, email), ' is not verified yet: open the link we mailed to it.'),
      h('div', { class: 'actions' }, again),
      status,
    ),
  );
}

/**
 * Asks GET /api/me whether the address is verified and shows or hides the banner; the address it
 * answers is kept with the session (it changes when a new one is confirmed). A failure leaves the
 * banner as it was: the screens say what went wrong with their own calls.
 */
export async function refreshBanner(): Promise<void> {
  if (!mailOn()) return;
  const me = await authed((jwt) => getMe(jwt)).catch(() => null);
  if (me === null) return;
  if (me.email !== undefined) updateUser({ email: me.email, username: me.username });
  if (me.email_verified === false && me.email !== undefined) show(me.email);
  else hideBanner();
}
