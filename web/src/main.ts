import * as api from './api.js';
import { mailOn } from './api-email.js';
import { byId, focusHeading } from './dom.js';
import { takeLink, type EmailLink } from './links.js';
import { takeCodeFromQuery } from './user-code.js';
import { clearNotices, notify } from './notices.js';
import { reauthenticate } from './reauth-dialog.js';
import { currentSession, endSession, onSessionEnded, onStepUp, restoreSession, startSession } from './session.js';
import { accountView } from './views/account.js';
import { appsView } from './views/apps.js';
import { forgotView, loginView, signupView } from './views/auth.js';
import { deviceView, DEVICE_LOGIN_LEDE, DEVICE_PATH } from './views/device.js';
import { confirmView, resetView } from './views/email-links.js';
import { securityLogView } from './views/security-log.js';
import { tokensView } from './views/tokens.js';
import { hideMfaBanner, refreshMfaBanner } from './views/mfa-banner.js';
import { hideBanner, refreshBanner } from './views/verify-banner.js';
import type { View } from './views/view.js';
import { webhooksView } from './views/webhooks.js';

/*
 * The Developers page. Screens are chosen by the URL fragment (#tokens, #apps, #security, #webhooks,
 * #account, #login, #signup, #forgot), which never carries anything secret; the user token lives in
 * session.ts only. The one exception, a mail's link (#reset=<token>...), is taken out of the address
 * bar by links.ts before anything else happens, and its screen shown until the person moves on.
 * The same page served at /device (contract §13.7) shows the device screen instead of the fragment's.
 */

const main = byId('main', HTMLElement);
const viewRoot = byId('view', HTMLDivElement);
const nav = byId('nav', HTMLElement);
const account = byId('account', HTMLDivElement);
const who = byId('who', HTMLSpanElement);
const logoutButton = byId('logout', HTMLButtonElement);

/** The banners above every screen: an unverified email, a second factor the server requires. */
function refreshBanners(): void {
  void refreshBanner();
  void refreshMfaBanner();
}
function hideBanners(): void {
  hideBanner();
  hideMfaBanner();
}

const route = (): string => location.hash.replace(/^#\/?/, '');
const onDevicePage = location.pathname === DEVICE_PATH;
/** The screens of a signed-in person; the first is where an unknown fragment leads. */
const SCREENS = ['tokens', 'apps', 'security', 'webhooks', 'account'] as const;
const screenOf = (name: string): (typeof SCREENS)[number] => SCREENS.find((s) => s === name) ?? 'tokens';

function viewOf(screen: (typeof SCREENS)[number], user: api.User): View {
  switch (screen) {
    case 'apps':
      return appsView();
    case 'security':
      return securityLogView(user.id);
    case 'webhooks':
      return webhooksView();
    case 'account':
      return accountView(user, accountDeleted);
    case 'tokens':
      return tokensView();
  }
}

/**
 * The screen of the mail link this tab opened, kept while the person stays on it: built once, so a
 * re-render (a session ending meanwhile) shows it again rather than using its token a second time.
 */
let linkScreen: View | null = null;

function linkView(link: EmailLink): View {
  if (link.kind === 'reset') return resetView(link, passwordReset);
  return confirmView({ ...link, kind: link.kind }, emailConfirmed);
}

function signedOutView(): View {
  const screen = route();
  if (screen === 'signup') return signupView(signedIn);
  if (screen === 'forgot' && mailOn()) return forgotView();
  return onDevicePage ? loginView(signedIn, DEVICE_LOGIN_LEDE) : loginView(signedIn);
}

/** A signed-in person's screen: the device screen at /device, else the fragment's, marked in the nav. */
function signedInView(user: api.User): View {
  if (onDevicePage) return deviceView();
  const screen = screenOf(route());
  for (const link of nav.querySelectorAll('a')) {
    if (link.getAttribute('href') === `#${screen}`) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  return viewOf(screen, user);
}

function render(focus: boolean): void {
  const session = currentSession();
  nav.hidden = session === null;
  account.hidden = session === null;
  let view: View;
  if (linkScreen !== null) {
    view = linkScreen;
  } else if (session === null) {
    view = signedOutView();
  } else {
    who.textContent = session.user.username;
    view = signedInView(session.user);
  }
  viewRoot.replaceChildren(view.element);
  document.title = `${view.heading.textContent ?? ''} · rz-auth Developers`;
  // Screen readers and keyboards start at the new screen's heading, not wherever focus was.
  if (focus) focusHeading(view.heading);
}

/** Shows the screen named by the fragment; `navigate` to the current one just re-renders it. */
function navigate(screen: string): void {
  if (route() === screen) render(true);
  else location.hash = screen;
}

function signedIn(grant: api.SessionGrant): void {
  startSession(grant);
  clearNotices();
  refreshBanners();
  if (!onDevicePage) {
    navigate(screenOf(route()));
    return;
  }
  // Back at /device (without #signup, say) with the kept code in its field.
  history.replaceState(history.state, '', DEVICE_PATH);
  render(true);
}

/** Every session of the account ended with the reset, this tab's too if it was the same account. */
function passwordReset(): void {
  linkScreen = null;
  endSession();
  hideBanners();
  render(true);
  notify('success', 'Your password has been changed and every session of your account signed out. Log in with your new password.');
}

/** After a verification or an email change: the banner and the address shown follow; false when this tab is signed out. */
async function emailConfirmed(): Promise<boolean> {
  if (currentSession() !== null) await refreshBanner();
  return currentSession() !== null;
}

/** After DELETE /api/me: nothing of the account is left to keep in this tab. */
function accountDeleted(): void {
  endSession();
  hideBanners();
  render(true);
  notify('success', 'Your account has been deleted, with its tokens, apps and sessions.');
}

async function logout(): Promise<void> {
  const session = currentSession();
  if (session === null || logoutButton.getAttribute('aria-disabled') === 'true') return;
  logoutButton.setAttribute('aria-disabled', 'true');
  let reached = true;
  try {
    await api.logout(session.jwt);
  } catch (error) {
    // 401: the session had already ended, which is what was asked for.
    reached = error instanceof api.ApiError && error.status !== 0 && error.status < 500;
  }
  logoutButton.removeAttribute('aria-disabled');
  endSession();
  hideBanners();
  render(true);
  if (reached) notify('success', 'You have logged out.');
  else notify('error', 'You are logged out in this tab, but rz-auth could not be reached to end the session: it stays valid until it expires.');
}

onSessionEnded(() => {
  // A dialog left open would act for a session that is gone: it is cancelled.
  for (const dialog of document.querySelectorAll('dialog')) if (dialog.open) dialog.close('cancel');
  // A value shown once stays until it is dismissed: its token is live, and it cannot be shown again.
  const secrets = [...viewRoot.querySelectorAll('section.secret')];
  hideBanners();
  render(true);
  viewRoot.prepend(...secrets);
  notify('info', secrets.length > 0 ? 'Your session ended, please log in again. The new value stays shown below until you dismiss it.' : 'Your session ended, please log in again.');
});

window.addEventListener('hashchange', () => {
  // A link pasted into this tab changes only the fragment; any other move leaves the link's screen.
  const link = takeLink();
  linkScreen = link === null ? null : linkView(link);
  clearNotices();
  // Recovery codes not yet confirmed as saved follow the person to the next screen (views/recovery-codes.ts).
  const unsaved = [...viewRoot.querySelectorAll('section.recovery-codes-panel')];
  render(true);
  viewRoot.prepend(...unsaved);
});
logoutButton.addEventListener('click', () => void logout());
onStepUp(reauthenticate);
byId('skip-link', HTMLAnchorElement).addEventListener('click', (event) => {
  // The fragment names screens, so the skip link moves focus itself instead of changing it.
  event.preventDefault();
  main.focus();
});

// Before any request: the token leaves the address bar first, and so does a device's code.
const opened = takeLink();
if (onDevicePage) {
  takeCodeFromQuery();
  // The screens' links in the header lead back to the Developers page from here.
  for (const link of document.querySelectorAll<HTMLAnchorElement>('header a[href^="#"]')) link.setAttribute('href', `/developers${link.getAttribute('href') ?? ''}`);
}
if (restoreSession() !== null) refreshBanners();
linkScreen = opened === null ? null : linkView(opened);
render(false);
