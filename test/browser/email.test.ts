import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD } from '../helpers/api.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';
import { browserAvailable, launch, logIn, openContext, screenshot, serve, signedIn, type SignedIn, signUp, type Served, type Watch } from './harness.js';

/*
 * The Developers page's mail screens in chromium (contract §11.4), against the real server sending
 * through a real SMTP server on loopback: forgot password, the link screens that read the fragment,
 * the unverified banner, changing the email; and with mail off, none of it.
 */

const GROUP = 'email';
const PUBLIC_URL = 'https://auth.example.test';
const NEW_PASSWORD = 'a brand new passphrase from the reset link';
const run = browserAvailable();

type LinkKind = 'reset' | 'verify-email' | 'confirm-email';

/**
 * The fragment of the `nth` link of `kind` mailed to `address` (waiting for it to arrive), each
 * checked to point at PUBLIC_URL; the test opens it on the server under test.
 */
async function mailedLink(smtp: TestSmtpServer, address: string, kind: LinkKind, nth = 1): Promise<string> {
  const prefix = `${PUBLIC_URL}/developers#${kind}=`;
  const links = () =>
    smtp.messages.filter((mail) => mail.envelope.to.includes(address)).flatMap((mail) => mail.links.find((link) => link.startsWith(prefix)) ?? []);
  await expect.poll(() => links().length, { timeout: 15_000 }).toBeGreaterThanOrEqual(nth);
  const link = links()[nth - 1] ?? '';
  expect(link).toMatch(/#[a-z-]+=rzl_[A-Za-z0-9_-]{43}$/);
  return link.slice(`${PUBLIC_URL}/developers`.length);
}

const call = (url: string, method: string, path: string, token?: string, body?: unknown) =>
  fetch(`${url}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe.skipIf(!run)('the mail screens in chromium, mail on', { timeout: 90_000 }, () => {
  let smtp: TestSmtpServer;
  let server: Served;
  let browser: Browser;
  let context: BrowserContext;
  const watch: Watch = { urls: [], consoleErrors: [], cspViolations: [] };
  const notices = (page: Page) => page.locator('#notices').innerText();
  const banner = (page: Page) => page.getByRole('region', { name: 'Email address not verified' });
  /** Opens a mail's link as a mail client does: a new tab, the page loaded from scratch. */
  const openLink = async (fragment: string): Promise<Page> => {
    const page = await context.newPage();
    await page.goto(`${server.url}/developers${fragment}`);
    return page;
  };

  beforeAll(async () => {
    smtp = await startSmtpServer();
    server = await serve({ SMTP_URL: smtp.url, MAIL_FROM: '"rz-auth" <no-reply@example.test>', PUBLIC_URL });
    browser = await launch();
    context = await openContext(browser, server.url, watch);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await smtp?.close();
  });

  it('forgot password: the same answer for any address; the link sets a new password, leaves no token in the address bar and ends every session', async () => {
    const email = 'grace@example.com';
    const jwt = await signUp(server.url, email, 'grace');
    const page = await context.newPage();
    await page.goto(`${server.url}/developers`);
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.getByRole('heading', { name: 'Reset your password', level: 1 }).waitFor();
    const answer = page.getByRole('status');
    await page.getByLabel('Email').fill('nobody@example.com');
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await expect.poll(() => answer.innerText()).toContain('If an account uses nobody@example.com, a link');
    const unknown = (await answer.innerText()).replace('nobody@example.com', '<address>');
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await expect.poll(() => answer.innerText()).toContain(email);
    expect((await answer.innerText()).replace(email, '<address>')).toBe(unknown);
    await screenshot(page, 'forgot', GROUP);

    const fragment = await mailedLink(smtp, email, 'reset');
    const token = fragment.split('=')[1] ?? '';
    const reset = await openLink(fragment);
    await reset.getByRole('heading', { name: 'Choose a new password', level: 1 }).waitFor();
    expect(reset.url()).toBe(`${server.url}/developers`);
    await reset.getByLabel('New password', { exact: true }).fill('too short');
    await reset.getByRole('button', { name: 'Set new password' }).click();
    await expect.poll(() => reset.getByLabel('New password', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await reset.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await reset.getByRole('button', { name: 'Set new password' }).click();
    await reset.getByRole('heading', { name: 'Log in', level: 1 }).waitFor();
    expect(await notices(reset)).toContain('Your password has been changed');
    expect((await call(server.url, 'GET', '/api/me', jwt)).status).toBe(401);
    expect((await call(server.url, 'POST', '/api/auth/login', undefined, { email, password: NEW_PASSWORD })).status).toBe(200);

    // The link works once: opened again, it says so plainly and offers a new one.
    const again = await openLink(fragment);
    await again.getByLabel('New password', { exact: true }).fill(`${NEW_PASSWORD} again`);
    await again.getByRole('button', { name: 'Set new password' }).click();
    await expect.poll(() => again.getByRole('alert').last().innerText()).toContain('This link cannot be used');
    expect(await again.getByRole('link', { name: 'Ask for a new link' }).isVisible()).toBe(true);
    await screenshot(again, 'reset-link-used', GROUP);
    // The token went in a POST body only: no address the browser asked for holds it.
    expect(watch.urls.filter((url) => url.includes(token))).toEqual([]);
    expect(server.logs.filter((line) => line.includes(token))).toEqual([]);
  });

  it('the banner while unverified: "Send again" mails a new link, the old one dies, the new one verifies and the banner goes', async () => {
    const email = 'ada@example.com';
    await signUp(server.url, email, 'ada');
    const first = await mailedLink(smtp, email, 'verify-email');
    const page = await context.newPage();
    await logIn(page, server.url, email);
    await banner(page).waitFor();
    expect(await banner(page).innerText()).toContain(`Your email address ${email} is not verified yet`);
    await banner(page).getByRole('button', { name: 'Send again' }).click();
    await expect.poll(() => banner(page).innerText()).toContain(`A new link is on its way to ${email}`);
    await screenshot(page, 'banner', GROUP);
    const second = await mailedLink(smtp, email, 'verify-email', 2);
    expect(second).not.toBe(first);

    // The older link died with the new mail.
    const old = await openLink(first);
    await expect.poll(() => old.getByRole('alert').innerText()).toContain('This link cannot be used');

    // A link pasted into the signed-in tab only changes its fragment: the page takes it all the same.
    await page.goto(`${server.url}/developers${second}`);
    await expect.poll(() => page.locator('#view').getByRole('status').innerText()).toContain('Your email address is verified.');
    await expect.poll(() => page.url()).toBe(`${server.url}/developers`);
    await expect.poll(() => banner(page).count()).toBe(0);
    await page.getByRole('link', { name: 'Continue to your API tokens' }).click();
    await page.getByRole('heading', { name: 'API tokens', level: 1 }).waitFor();
    expect(await banner(page).count()).toBe(0);
  });

  it('change email under Account: a neutral answer, the link from the new address changes it', async () => {
    const email = 'hedy@example.com';
    const next = 'hedy.lamarr@example.org';
    await signUp(server.url, email, 'hedy');
    const page = await context.newPage();
    await logIn(page, server.url, email, { fragment: '#account', heading: 'Account' });
    const card = page.getByRole('region', { name: 'Change email' });
    await card.getByLabel('New email').fill(next);
    await card.getByLabel('Password', { exact: true }).fill('not my password at all');
    await card.getByRole('button', { name: 'Change email' }).click();
    await expect.poll(() => card.getByText('This is not your password.').isVisible()).toBe(true);
    await card.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await card.getByRole('button', { name: 'Change email' }).click();
    await expect.poll(() => notices(page)).toContain(`A link to confirm the change is on its way to ${next}, if that address can be used. Your email stays ${email}`);
    await screenshot(page, 'change-email', GROUP);

    const fragment = await mailedLink(smtp, next, 'confirm-email');
    await page.goto(`${server.url}/developers${fragment}`);
    await expect.poll(() => page.locator('#view').getByRole('status').innerText()).toContain('Your email address has been changed.');
    await page.getByRole('link', { name: 'Continue to your API tokens' }).click();
    await page.getByRole('link', { name: 'Account' }).click();
    await expect.poll(() => page.getByText(`Signed in as hedy (${next}).`).isVisible()).toBe(true);
    expect((await call(server.url, 'POST', '/api/auth/login', undefined, { email: next, password: PASSWORD })).status).toBe(200);
  });

  it('broke no CSP rule and logged no unexpected error', () => {
    expect(watch.cspViolations).toEqual([]);
    expect(watch.consoleErrors).toEqual([]);
  });
});

describe.skipIf(!run)('the mail screens in chromium, mail off', { timeout: 60_000 }, () => {
  let server: Served;
  let browser: Browser;
  const watch: Watch = { urls: [], consoleErrors: [], cspViolations: [] };

  beforeAll(async () => {
    server = await serve();
    browser = await launch();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('offers no forgot link, no banner and no email change; a link still leaves the address bar', async () => {
    await signUp(server.url, 'linus@example.com', 'linus');
    const page = await (await openContext(browser, server.url, watch)).newPage();
    await page.goto(`${server.url}/developers#forgot`);
    await page.getByRole('heading', { name: 'Log in', level: 1 }).waitFor();
    expect(await page.getByRole('link', { name: 'Forgot password?' }).count()).toBe(0);
    await logIn(page, server.url, 'linus@example.com', { fragment: '#account', heading: 'Account' });
    expect(await page.getByRole('region', { name: 'Change email' }).count()).toBe(0);
    expect(await page.locator('#banner').innerHTML()).toBe('');

    await page.goto(`${server.url}/developers#verify-email=rzl_${'A'.repeat(43)}`);
    await expect.poll(() => page.getByRole('alert').innerText()).toContain('this server no longer sends mail');
    await expect.poll(() => page.url()).toBe(`${server.url}/developers`);
    expect(watch.cspViolations).toEqual([]);
    expect(watch.consoleErrors).toEqual([]);
  });
});

describe.skipIf(!run)('the mail screens in chromium, verification required', { timeout: 90_000 }, () => {
  let smtp: TestSmtpServer;
  let signed: SignedIn;
  const watch: Watch = { urls: [], consoleErrors: [], cspViolations: [] };

  beforeAll(async () => {
    smtp = await startSmtpServer();
    signed = await signedIn('grace@example.com', 'grace', watch, { SMTP_URL: smtp.url, MAIL_FROM: 'no-reply@example.test', PUBLIC_URL, EMAIL_VERIFICATION_REQUIRED: 'true' });
  });

  afterAll(async () => {
    await signed?.close();
    await smtp?.close();
  });

  it('a token refused with email_unverified says what to do, and the banner offers the link again', async () => {
    const { page } = signed;
    await page.getByRole('button', { name: 'New token' }).click();
    await page.getByLabel('Name').fill('deploy script');
    await page.getByRole('button', { name: 'Create token' }).click();
    await expect.poll(() => page.locator('#view').innerText()).toContain('Verify your email address first: open the link we mailed you, or choose “Send again” at the top of the page.');
    expect(await page.getByRole('region', { name: 'Email address not verified' }).getByRole('button', { name: 'Send again' }).count()).toBe(1);
    expect(await page.getByRole('group', { name: 'New API token value' }).count()).toBe(0);
    await screenshot(page, 'email-unverified', GROUP);
    expect(watch.cspViolations).toEqual([]);
  });
});
