import { listFactors } from '../api-mfa.js';
import { byId, h, replace } from '../dom.js';
import { formatDate } from '../format.js';
import { authed } from '../session.js';

/*
 * The banner on every screen while MFA_REQUIRED gives the signed-in account, which has no second
 * factor yet, a grace period (contract §12.7): `required_by` of GET /api/me/mfa, its end. GET
 * /api/me does not carry it, so the page asks the factor list, which the Account screen also reads,
 * and only on a server that requires a factor (it says so in the page's HTML, src/web/routes.ts).
 */

const required = (): boolean => document.querySelector('meta[name="rz-auth-mfa-required"]')?.getAttribute('content') === 'on';

const slot = (): HTMLDivElement => byId('mfa-banner', HTMLDivElement);

export const hideMfaBanner = (): void => replace(slot());

/** Shows the banner for `requiredBy` (an ISO time), or hides it for null. */
export function showMfaBanner(requiredBy: string | null): void {
  if (requiredBy === null) {
    hideMfaBanner();
    return;
  }
  replace(
    slot(),
    h(
      'section',
      { class: 'banner', 'aria-label': 'Two-step login required' },
      h('p', {}, 'This server requires two-step login. Add an authenticator app before ', h('strong', {}, formatDate(requiredBy)), ' to keep using your account.'),
      h('div', { class: 'actions' }, h('a', { class: 'button', href: '#account' }, 'Go to Account')),
    ),
  );
}

/** Asks GET /api/me/mfa; a failure leaves the banner as it was (the screens report their own calls). */
export async function refreshMfaBanner(): Promise<void> {
  if (!required()) return;
  const listed = await authed((jwt) => listFactors(jwt)).catch(() => null);
  if (listed !== null) showMfaBanner(listed.required_by);
}
