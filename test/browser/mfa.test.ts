import { readFileSync } from 'node:fs';
import { Secret, TOTP } from 'otpauth';
import type { Browser, Page } from 'playwright-core';
import { encode } from 'uqr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD } from '../helpers/api.js';
import { TestClock } from '../helpers/clock.js';
import { mfaEnv } from '../helpers/mfa.js';
import { browserAvailable, launch, logIn, openContext, screenshot, serve, signUp, type Served, type Watch } from './harness.js';

/*
 * Two-step login on the Developers page in chromium, against the real server (contract §12.9):
 * adding an authenticator app from its QR code's key, the recovery codes shown once with their
 * download, logging in with the app's code or a recovery code, and the re-authentication dialog
 * that a stale login meets on creating an API token, after which the action goes through.
 */

const EMAIL = 'grace@example.com';
const GROUP = 'mfa';
/** The server's freshness window for step-up (contract §12.2), at its minimum so the clock can pass it. */
const REAUTH_MAX_AGE_S = 10;
const run = browserAvailable();

describe.skipIf(!run)('two-step login on the Developers page in chromium', { timeout: 60_000 }, () => {
  // The server's clock, moved by hand: a new TOTP step for each code (a code works once per step)
  // and past the step-up window. It starts at the real time, since the page reads the JWT's expiry.
  const clock = new TestClock(Date.now());
  let server: Served;
  let browser: Browser;
  let page: Page;
  let totp: TOTP;
  let recoveryCodes: string[] = [];
  const watch: Watch = { urls: [], consoleErrors: [], cspViolations: [] };

  const code = () => totp.generate({ timestamp: clock.now() });
  const nextStep = () => clock.advance(30_000);
  const notices = () => page.locator('#notices').innerText();
  const dialog = () => page.getByRole('dialog');
  const pageJwt = async () => ((await page.evaluate('JSON.parse(sessionStorage.getItem("rz-auth.session") ?? "null")')) as { jwt: string } | null)?.jwt ?? null;
  const me = async (jwt: string) => (await fetch(`${server.url}/api/me`, { headers: { authorization: `Bearer ${jwt}` } })).json() as Promise<{ auth?: { amr: string[] } }>;

  /** Logs out through the page and enters the password: the second step is then on screen. */
  const passwordStep = async (): Promise<string> => {
    if (await page.getByRole('button', { name: 'Log out' }).isVisible()) await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('heading', { name: 'Log in', level: 1 }).waitFor();
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    const answer = page.waitForResponse((r) => r.url().endsWith('/api/auth/login'));
    await page.getByRole('button', { name: 'Log in' }).click();
    const body = (await (await answer).json()) as { code: string; mfa_token: string };
    expect(body.code).toBe('mfa_required');
    await page.getByRole('heading', { name: 'Two-step verification', level: 1 }).waitFor();
    return body.mfa_token;
  };

  beforeAll(async () => {
    server = await serve({ ...mfaEnv(), REAUTH_MAX_AGE_S: String(REAUTH_MAX_AGE_S) }, clock);
    await signUp(server.url, EMAIL, 'grace');
    browser = await launch();
    page = await (await openContext(browser, server.url, watch)).newPage();
    await logIn(page, server.url, EMAIL, { fragment: '#account', heading: 'Account' });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('adds an authenticator app from the key shown beside its QR code; a wrong code is told at its field', async () => {
    const started = page.waitForResponse((r) => r.url().endsWith('/api/me/mfa/totp'));
    await page.getByRole('button', { name: 'Add authenticator app' }).click();
    const qr = page.getByRole('img', { name: 'QR code to scan with your authenticator app' });
    await qr.waitFor();
    // The page draws exactly the modules of the otpauth URI's QR code, with the quiet zone.
    const { otpauth_uri: uri } = (await (await started).json()) as { otpauth_uri: string };
    const expected = encode(uri, { ecc: 'M', border: 4 });
    const dark = expected.data.flatMap((row, y) => row.flatMap((on, x) => (on ? [`M${x} ${y}h1v1h-1z`] : []))).join('');
    expect(await qr.locator('path').getAttribute('d')).toBe(dark);
    expect(await qr.getAttribute('viewBox')).toBe(`0 0 ${expected.size} ${expected.size}`);
    const secret = (await page.locator('.totp-secret').innerText()).replaceAll(' ', '');
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    totp = new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });
    await screenshot(page, 'add-app', GROUP);

    const field = page.getByLabel('Code from the app');
    expect(await field.getAttribute('autocomplete')).toBe('one-time-code');
    expect(await field.getAttribute('inputmode')).toBe('numeric');
    await field.fill(code() === '000000' ? '111111' : '000000');
    await page.getByRole('button', { name: 'Confirm' }).click();
    await expect.poll(() => field.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.field-error:visible').innerText()).toContain('That code is not right');

    await field.fill(code());
    await page.getByLabel('Name').fill('Phone');
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    expect(await notices()).toContain('Added “Phone”');
  });

  it('shows ten recovery codes once, downloads them as a text file, and asks for "saved" before dismissing', async () => {
    recoveryCodes = await page.locator('.recovery-codes code').allInnerTexts();
    expect(recoveryCodes).toHaveLength(10);
    for (const c of recoveryCodes) expect(c).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$/);
    await screenshot(page, 'recovery-codes', GROUP);

    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download as a text file' }).click();
    const file = await download;
    expect(file.suggestedFilename()).toBe('rz-auth-recovery-codes.txt');
    const text = readFileSync(await file.path(), 'utf8');
    for (const c of recoveryCodes) expect(text).toContain(c);
    expect(text).toContain('grace');

    await page.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => page.getByText('Tick this first').isVisible()).toBe(true);
    expect(await page.locator('.recovery-codes code').count()).toBe(10);
    await page.getByLabel('I have saved these codes somewhere safe').check();
    await page.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => page.locator('.recovery-codes-panel').count()).toBe(0);

    const factor = page.locator('li[data-factor]');
    await expect.poll(() => factor.count()).toBe(1);
    expect(await factor.innerText()).toMatch(/Phone[\s\S]*Authenticator app[\s\S]*Last used[\s\S]*Never/);
    expect(await page.getByText('Recovery codes left: 10 of 10.').isVisible()).toBe(true);
  });

  it('logs in with the password and then the app’s code; the mfa_token stays out of storage and the URL', async () => {
    const mfaToken = await passwordStep();
    const field = page.getByLabel('Code from your authenticator app');
    expect(await field.getAttribute('autocomplete')).toBe('one-time-code');
    expect(await field.getAttribute('inputmode')).toBe('numeric');
    expect(await page.evaluate('JSON.stringify(sessionStorage) + JSON.stringify(localStorage) + location.href + document.documentElement.outerHTML')).not.toContain(mfaToken);

    await field.fill('12345');
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => page.locator('.field-error:visible').innerText()).toContain('That code is not right');
    await screenshot(page, 'second-step-wrong-code', GROUP);

    nextStep();
    await field.fill(code());
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    const jwt = await pageJwt();
    expect((await me(jwt ?? '')).auth?.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(await page.locator('li[data-factor]').innerText()).not.toContain('Never');
  });

  it('logs in with a recovery code after "Use a recovery code", which then no longer works', async () => {
    await passwordStep();
    await page.getByRole('button', { name: 'Use a recovery code' }).click();
    const field = page.getByLabel('Recovery code');
    await field.fill((recoveryCodes[0] ?? '').toLowerCase());
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    await expect.poll(notices).toContain('9 codes are left');
    await expect.poll(() => page.getByText('Recovery codes left: 9 of 10.').isVisible()).toBe(true);

    await passwordStep();
    await page.getByRole('button', { name: 'Use a recovery code' }).click();
    await field.fill(recoveryCodes[0] ?? '');
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => page.locator('.field-error:visible').innerText()).toContain('already used');
    await page.getByRole('button', { name: 'Use your authenticator app' }).click();
    nextStep();
    await page.getByLabel('Code from your authenticator app').fill(code());
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
  });

  it('asks a stale login to confirm with a code on creating an API token, then creates it with the new token', async () => {
    const before = await pageJwt();
    clock.advance((REAUTH_MAX_AGE_S + 1) * 1000);
    await page.getByRole('link', { name: 'API tokens' }).click();
    await page.getByRole('button', { name: 'New token' }).click();
    await page.getByLabel('Name').fill('deploy script');
    const refused = page.waitForResponse((r) => r.url().endsWith('/api/tokens') && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Create token' }).click();
    const challenge = await refused;
    expect(challenge.status()).toBe(401);
    expect(challenge.headers()['www-authenticate']).toContain('error="insufficient_user_authentication"');

    await dialog().getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    const field = dialog().getByLabel('Code from your authenticator app');
    await field.fill('000000' === code() ? '111111' : '000000');
    await dialog().getByRole('button', { name: 'Confirm' }).click();
    await expect.poll(() => dialog().locator('.field-error:visible').innerText()).toContain('That code is not right');
    await screenshot(page, 'step-up-dialog', GROUP);

    nextStep();
    await field.fill(code());
    await dialog().getByRole('button', { name: 'Confirm' }).click();
    const value = await page.getByRole('textbox', { name: 'New API token value' }).inputValue();
    expect(value).toMatch(/^rz_/);
    expect(await dialog().count()).toBe(0);
    const after = await pageJwt();
    expect(after).not.toBe(before);
    expect((await me(after ?? '')).auth?.amr).toContain('otp');
    const listed = await fetch(`${server.url}/api/tokens`, { headers: { authorization: `Bearer ${after ?? ''}` } });
    expect(((await listed.json()) as { tokens: unknown[] }).tokens).toHaveLength(1);
    await screenshot(page, 'step-up-retried', GROUP);
  });

  it('leaves the action undone and says why when the dialog is cancelled', async () => {
    clock.advance((REAUTH_MAX_AGE_S + 1) * 1000);
    await page.getByRole('button', { name: 'New token' }).click();
    await page.getByLabel('Name').fill('never made');
    await page.getByRole('button', { name: 'Create token' }).click();
    await dialog().getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => page.locator('.form-error').innerText()).toContain('This needs you to confirm it is you.');
    expect(await dialog().count()).toBe(0);
    const listed = await fetch(`${server.url}/api/tokens`, { headers: { authorization: `Bearer ${(await pageJwt()) ?? ''}` } });
    expect(((await listed.json()) as { tokens: unknown[] }).tokens).toHaveLength(1);
    // Still signed in: a refused step-up is not an ended session.
    expect(await page.getByRole('button', { name: 'Log out' }).isVisible()).toBe(true);
  });

  it('renames the app, makes new recovery codes (the old ones stop working) and removes the app', async () => {
    await page.getByRole('link', { name: 'Account' }).click();
    const factor = page.locator('li[data-factor]');
    await factor.getByRole('button', { name: /Rename/ }).click();
    await page.getByLabel('New name for “Phone”').fill('Work phone');
    await page.getByRole('button', { name: 'Save' }).click();
    // The login is stale again: the first write asks once, and the next ones go through.
    nextStep();
    await dialog().getByLabel('Code from your authenticator app').fill(code());
    await dialog().getByRole('button', { name: 'Confirm' }).click();
    await expect.poll(() => factor.locator('h3').innerText()).toBe('Work phone');

    await page.getByRole('button', { name: 'New recovery codes' }).click();
    await dialog().getByRole('button', { name: 'Make new codes' }).click();
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    const fresh = await page.locator('.recovery-codes code').allInnerTexts();
    expect(fresh).toHaveLength(10);
    expect(fresh).not.toContain(recoveryCodes[1]);
    const login = await fetch(`${server.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: EMAIL, password: PASSWORD }) });
    const { mfa_token: mfaToken } = (await login.json()) as { mfa_token: string };
    const verify = (recoveryCode: string) =>
      fetch(`${server.url}/api/auth/mfa/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ mfa_token: mfaToken, method: 'recovery_code', code: recoveryCode }) });
    expect((await verify(recoveryCodes[1] ?? '')).status).toBe(401);
    expect((await verify(fresh[0] ?? '')).status).toBe(200);
    await page.getByLabel('I have saved these codes somewhere safe').check();
    await page.getByRole('button', { name: 'Done' }).click();

    await factor.getByRole('button', { name: /Remove/ }).click();
    await dialog().getByRole('button', { name: 'Remove' }).click();
    await expect.poll(notices).toContain('Removed “Work phone”');
    await expect.poll(() => factor.count()).toBe(0);
  });

  it('asks for the password when a login without a second factor is too old to add one', async () => {
    clock.advance((REAUTH_MAX_AGE_S + 1) * 1000);
    await page.getByRole('button', { name: 'Add authenticator app' }).click();
    await dialog().getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    await dialog().getByLabel('Password', { exact: true }).fill('not my password at all');
    await dialog().getByRole('button', { name: 'Confirm' }).click();
    await expect.poll(() => dialog().locator('.field-error:visible').innerText()).toBe('This is not your password.');
    await dialog().getByLabel('Password', { exact: true }).fill(PASSWORD);
    await dialog().getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('img', { name: 'QR code to scan with your authenticator app' }).waitFor();
    await page.getByRole('button', { name: 'Cancel' }).click();
  });

  it('sent no request to another origin, broke no CSP rule and logged no unexpected error', () => {
    const origin = new URL(server.url).origin;
    expect(watch.urls.filter((url) => new URL(url).origin !== origin && !url.startsWith(`blob:${origin}/`))).toEqual([]);
    expect(watch.cspViolations).toEqual([]);
    expect(watch.consoleErrors).toEqual([]);
  });
});

describe.skipIf(!run)('the second step of a login, and MFA_REQUIRED, in chromium', { timeout: 60_000 }, () => {
  const clock = new TestClock(Date.now());
  let server: Served;
  let browser: Browser;
  let page: Page;
  const watch: Watch = { urls: [], consoleErrors: [], cspViolations: [] };
  const post = async (path: string, jwt: string, body?: unknown) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${jwt}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const secondStep = async () => {
    await page.goto(`${server.url}/developers#login`);
    await page.getByLabel('Email').fill('ada@example.com');
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Two-step verification', level: 1 }).waitFor();
  };

  beforeAll(async () => {
    server = await serve({ ...mfaEnv(), MFA_REQUIRED: 'true', MFA_GRACE_DAYS: '14' }, clock);
    const jwt = await signUp(server.url, 'ada@example.com', 'ada');
    const started = (await (await post('/api/me/mfa/totp', jwt)).json()) as { factor_id: string; secret: string };
    const totp = new TOTP({ secret: Secret.fromBase32(started.secret) });
    expect((await post(`/api/me/mfa/totp/${started.factor_id}/confirm`, jwt, { code: totp.generate({ timestamp: clock.now() }) })).status).toBe(200);
    browser = await launch();
    page = await (await openContext(browser, server.url, watch)).newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('returns to the password after five wrong codes, which kill the mfa_token', async () => {
    await secondStep();
    for (let i = 0; i < 4; i++) {
      await page.getByLabel('Code from your authenticator app').fill('000000');
      await page.getByRole('button', { name: 'Verify' }).click();
      // Each answer is awaited: a submission while one runs would be ignored by the form.
      await expect.poll(() => page.locator('form[aria-busy]').getAttribute('aria-busy')).toBe('false');
      expect(await page.locator('.field-error:visible').innerText()).toContain('That code is not right');
    }
    await page.getByLabel('Code from your authenticator app').fill('000000');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Log in', level: 1 }).waitFor();
    expect(await page.locator('.form-error').innerText()).toBe('Too many wrong codes. Please log in again.');
    expect(await page.getByLabel('Password', { exact: true }).inputValue()).toBe('');
  });

  it('returns to the password once the mfa_token’s five minutes have passed', async () => {
    await page.clock.install();
    await secondStep();
    await page.clock.fastForward('05:01');
    await page.getByLabel('Code from your authenticator app').fill('123456');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Log in', level: 1 }).waitFor();
    expect(await page.locator('.form-error').innerText()).toBe('The time for the second step ran out. Please log in again.');
  });

  it('shows a banner on every screen while MFA_REQUIRED waits for a factor, until one is added', async () => {
    await page.clock.resume();
    await signUp(server.url, 'bob@example.com', 'bob');
    await logIn(page, server.url, 'bob@example.com');
    const banner = page.getByRole('region', { name: 'Two-step login required' });
    const graceEnd = new Date(clock.now() + 14 * 86_400_000).toLocaleDateString('en-US', { dateStyle: 'medium', timeZone: 'UTC' });
    await expect.poll(() => banner.isVisible()).toBe(true);
    expect(await banner.innerText()).toContain(`before ${graceEnd}`);
    await screenshot(page, 'required-banner', GROUP);

    await banner.getByRole('link', { name: 'Go to Account' }).click();
    await page.getByRole('button', { name: 'Add authenticator app' }).click();
    const secret = (await page.locator('.totp-secret').innerText()).replaceAll(' ', '');
    await page.getByLabel('Code from the app').fill(new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: clock.now() }));
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    await expect.poll(() => banner.count()).toBe(0);
    await page.getByLabel('I have saved these codes somewhere safe').check();
    await page.getByRole('button', { name: 'Done' }).click();
    expect(watch.cspViolations).toEqual([]);
    expect(watch.consoleErrors).toEqual([]);
  });
});
