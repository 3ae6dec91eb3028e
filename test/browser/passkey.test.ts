import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD } from '../helpers/api.js';
import { TestClock } from '../helpers/clock.js';
import { mfaEnv } from '../helpers/mfa.js';
import { freePort } from '../helpers/server-process.js';
import { browserAvailable, launch, logIn, openContext, screenshot, serve, signUp, type Served, type Watch } from './harness.js';

/*
 * Passkeys on the Developers page in chromium, against the real server (contract §12.9), with a
 * CDP virtual authenticator in place of a device: adding one (the first factor, so recovery codes
 * follow), signing in with it and no password, using it as the second step after the password,
 * and confirming a stale login with it in the step-up dialog. WebAuthn needs a secure context and
 * an RP ID that is a domain: the page is browsed at http://localhost, the server's relying party.
 */

const EMAIL = 'ada@example.com';
const GROUP = 'passkey';
const REAUTH_MAX_AGE_S = 10;
const run = browserAvailable();

/** A CTAP2 authenticator built into the device that verifies the user and answers at once. */
async function addAuthenticator(page: Page): Promise<{ cdp: CDPSession; authenticatorId: string }> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  return { cdp, authenticatorId };
}

describe.skipIf(!run)('passkeys on the Developers page in chromium', { timeout: 60_000 }, () => {
  const clock = new TestClock(Date.now());
  let server: Served;
  let origin: string;
  let browser: Browser;
  let page: Page;
  let cdp: CDPSession;
  let authenticatorId: string;
  const watch: Watch = { urls: [], consoleErrors: [], cspViolations: [] };

  const notices = () => page.locator('#notices').innerText();
  const alert = () => page.locator('.form-error:visible').innerText();
  const dialog = () => page.getByRole('dialog');
  const pageJwt = async () => ((await page.evaluate('JSON.parse(sessionStorage.getItem("rz-auth.session") ?? "null")')) as { jwt: string } | null)?.jwt ?? '';
  const amr = async () => ((await (await fetch(`${server.url}/api/me`, { headers: { authorization: `Bearer ${await pageJwt()}` } })).json()) as { auth: { amr: string[] } }).auth.amr;
  const logOut = async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('heading', { name: 'Log in', level: 1 }).waitFor();
  };

  beforeAll(async () => {
    const port = await freePort();
    origin = `http://localhost:${port}`;
    server = await serve({ ...mfaEnv(), WEBAUTHN_RP_ID: 'localhost', WEBAUTHN_ORIGINS: origin, REAUTH_MAX_AGE_S: String(REAUTH_MAX_AGE_S) }, clock, port);
    await signUp(server.url, EMAIL, 'ada');
    browser = await launch();
    page = await (await openContext(browser, origin, watch)).newPage();
    ({ cdp, authenticatorId } = await addAuthenticator(page));
    await logIn(page, origin, EMAIL, { fragment: '#account', heading: 'Account' });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('adds a passkey from the Account screen: the first factor shows its recovery codes, then lists it as a passkey', async () => {
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByRole('button', { name: 'Create passkey' }).click();
    await expect.poll(() => page.locator('.field-error:visible').innerText()).toBe('Enter a name.');
    await page.getByLabel('Name').fill('Laptop');
    await screenshot(page, 'add-passkey', GROUP);
    await page.getByRole('button', { name: 'Create passkey' }).click();
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    expect(await page.locator('.recovery-codes code').count()).toBe(10);
    expect(await notices()).toContain('Added “Laptop”. It also signs you in without a password.');
    await page.getByLabel('I have saved these codes somewhere safe').check();
    await page.getByRole('button', { name: 'Done' }).click();

    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]?.isResidentCredential).toBe(true);
    const factor = page.locator('li[data-factor]');
    await expect.poll(() => factor.count()).toBe(1);
    expect(await factor.innerText()).toMatch(/Laptop[\s\S]*Passkey[\s\S]*This device only[\s\S]*Last used[\s\S]*Never/);
    await screenshot(page, 'passkey-listed', GROUP);
  });

  it('tells that the same authenticator is added already (the browser refuses a second credential)', async () => {
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByLabel('Name').fill('Laptop again');
    await page.getByRole('button', { name: 'Create passkey' }).click();
    // The login proved the password only, and the account now has a factor: adding one asks for it.
    await dialog().getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    await dialog().getByRole('button', { name: 'Use a passkey' }).click();
    await expect.poll(() => dialog().count()).toBe(0);
    await expect.poll(alert).toBe('This passkey or security key is already added to your account.');
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials).toHaveLength(1);
  });

  it('signs in from the login field’s autofill (conditional mediation) once logged out: the virtual authenticator picks the passkey at once', async () => {
    const login = page.waitForResponse((r) => r.url().endsWith('/api/auth/passkey/login'));
    await page.getByRole('button', { name: 'Log out' }).click();
    expect((await login).status()).toBe(200);
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    expect(await amr()).toEqual(['hwk', 'user', 'mfa']);
  });

  it('aborts the autofill’s waiting request when the password form is sent, then takes the passkey as the second step', async () => {
    // The authenticator stops answering by itself, so the autofill's request stays open.
    await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled: false });
    await page.evaluate(`(() => {
      const get = navigator.credentials.get.bind(navigator.credentials);
      navigator.credentials.get = (options) => { if (options.mediation === 'conditional') window.waiting = options.signal; return get(options); };
    })()`);
    await logOut();
    await expect.poll(() => page.evaluate('window.waiting instanceof AbortSignal && !window.waiting.aborted')).toBe(true);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Two-step verification', level: 1 }).waitFor();
    expect(await page.evaluate('window.waiting.aborted')).toBe(true);
    await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled: true });
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    expect(await amr()).toEqual(['pwd', 'hwk', 'mfa']);
  });

  it('signs in with the "Sign in with a passkey" button and no password, where the browser has no autofill for passkeys', async () => {
    // From here on the browser offers no conditional mediation, so the login form stays on screen.
    await page.evaluate('PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false)');
    await logOut();
    const passwordLogins = () => watch.urls.filter((u) => u.endsWith('/api/auth/login')).length;
    const before = passwordLogins();
    expect(await page.getByLabel('Email').getAttribute('autocomplete')).toBe('username webauthn');
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    expect(await amr()).toEqual(['hwk', 'user', 'mfa']);
    expect(passwordLogins()).toBe(before);
  });

  it('logs in with the password and then "Use a passkey" as the second step', async () => {
    await logOut();
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Two-step verification', level: 1 }).waitFor();
    await screenshot(page, 'second-step', GROUP);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    expect(await amr()).toEqual(['pwd', 'hwk', 'mfa']);
  });

  it('confirms a stale login with the passkey in the step-up dialog, then creates the token', async () => {
    const before = await pageJwt();
    clock.advance((REAUTH_MAX_AGE_S + 1) * 1000);
    await page.getByRole('link', { name: 'API tokens' }).click();
    await page.getByRole('button', { name: 'New token' }).click();
    await page.getByLabel('Name').fill('deploy script');
    await page.getByRole('button', { name: 'Create token' }).click();
    await dialog().getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    await screenshot(page, 'step-up-dialog', GROUP);
    await dialog().getByRole('button', { name: 'Use a passkey' }).click();
    expect(await page.getByRole('textbox', { name: 'New API token value' }).inputValue()).toMatch(/^rz_/);
    expect(await dialog().count()).toBe(0);
    expect(await pageJwt()).not.toBe(before);
    expect(await amr()).toContain('hwk');
  });

  it('tells a passkey rz-auth does not know (401) and a cancelled ceremony apart, in a second browser', async () => {
    const other = await (await openContext(browser, origin, watch)).newPage();
    const { cdp: otherCdp, authenticatorId: otherId } = await addAuthenticator(other);
    await other.goto(`${origin}/developers`);
    await other.getByRole('heading', { name: 'Log in', level: 1 }).waitFor();
    // No passkey for this site on this authenticator: the browser ends the ceremony with NotAllowedError.
    await other.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await expect.poll(() => other.locator('.form-error:visible').innerText()).toContain('cancelled or timed out');

    const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
    await otherCdp.send('WebAuthn.addCredential', {
      authenticatorId: otherId,
      credential: { credentialId: randomBytes(16).toString('base64'), isResidentCredential: true, rpId: 'localhost', privateKey: key, userHandle: randomBytes(16).toString('base64'), signCount: 0 },
    });
    await other.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await expect.poll(() => other.locator('.form-error:visible').innerText()).toBe('That passkey is not one rz-auth knows. Log in with your password, or use another passkey.');
    await screenshot(other, 'unknown-passkey', GROUP);
    expect(await other.getByRole('heading', { name: 'Log in', level: 1 }).isVisible()).toBe(true);
  });

  it('made no request to another origin, broke no CSP rule and logged no console error', () => {
    expect(watch.urls.filter((u) => !u.startsWith(`${origin}/`))).toEqual([]);
    expect(watch.cspViolations).toEqual([]);
    expect(watch.consoleErrors).toEqual([]);
  });
});
