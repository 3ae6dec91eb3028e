import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/tokens/scopes.js';
import { PAGE_CSP } from '../../src/web/routes.js';
import { PASSWORD } from '../helpers/api.js';
import { TestClock } from '../helpers/clock.js';
import { browserAvailable, focused, launch, openContext, screenshot, serve, type Served, tabTo, type Watch } from './harness.js';

/*
 * The Developers page in a real browser (Debian's chromium through playwright-core), against the
 * real server: the whole flow a person goes through, with screenshots of each screen saved to
 * test-results/screenshots/ (not committed).
 */

const EMAIL = 'ada@example.com';
const USERNAME = 'ada_lovelace';
const TOKEN_SHAPED = /\brza?_[0-9A-Za-z]{20,}/;

const api = (base: string, method: string, path: string, token?: string, body?: unknown) =>
  fetch(`${base}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

const statusWith = async (base: string, token: string, path = '/api/me') => (await api(base, 'GET', path, token)).status;

/** The user token the page keeps in this tab's sessionStorage. */
async function pageJwt(page: Page): Promise<string> {
  const saved = (await page.evaluate('sessionStorage.getItem("rz-auth.session")')) as string | null;
  return (JSON.parse(saved ?? '{}') as { jwt?: string }).jwt ?? '';
}

/** The value in the show-once panel, which must say it will not be shown again. */
async function shownOnce(page: Page, label: string): Promise<string> {
  const panel = page.locator('.secret');
  await expect.poll(() => panel.isVisible()).toBe(true);
  expect(await panel.innerText()).toMatch(/you will not see this again/i);
  return page.getByLabel(label).inputValue();
}

const run = browserAvailable();

describe.skipIf(!run)('Developers page in chromium', { timeout: 60_000 }, () => {
  let server: Served;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  // The server's clock, moved by hand to expire a session; it starts at the real time because the
  // page computes expiry dates from the browser's clock.
  const clock = new TestClock(Date.now());
  const watch: Watch = { urls: [], consoleErrors: [], cspViolations: [] };
  const secrets: string[] = [];
  const jwts: string[] = [];

  beforeAll(async () => {
    server = await serve({}, clock);
    browser = await launch();
    context = await openContext(browser, server.url, watch);
    page = await context.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('serves the page at /developers with a strict CSP, no inline script or style, and / redirects to it', async () => {
    const root = await fetch(`${server.url}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/developers');

    const res = await fetch(`${server.url}/developers`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(PAGE_CSP);
    expect(PAGE_CSP).toContain("script-src 'self';");
    expect(PAGE_CSP).not.toContain('unsafe');
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=|<style|\son[a-z]+=/i);
    expect(html).not.toMatch(/https?:\/\//);

    const etag = res.headers.get('etag') ?? '';
    const again = await fetch(`${server.url}/developers`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    const script = await fetch(`${server.url}/developers/main.js`);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect((await fetch(`${server.url}/developers/style.css`)).headers.get('content-type')).toBe('text/css; charset=utf-8');
    const spec = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(spec.paths).filter((p) => p === '/' || p.startsWith('/developers'))).toEqual([]);
  });

  it('signs up, showing the API\'s validation errors next to each field', async () => {
    await page.goto(`${server.url}/`);
    await expect.poll(() => page.getByRole('heading', { name: 'Log in' }).isVisible()).toBe(true);
    expect(await page.title()).toBe('Log in · rz-auth Developers');
    await screenshot(page, 'login');

    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Username').fill('no spaces allowed');
    await page.getByLabel('Password', { exact: true }).fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();

    const username = page.getByLabel('Username');
    await expect.poll(() => username.getAttribute('aria-invalid')).toBe('true');
    const password = page.getByLabel('Password', { exact: true });
    expect(await password.getAttribute('aria-invalid')).toBe('true');
    const errors = await page.locator('.field-error:visible').allInnerTexts();
    expect(errors).toEqual(['Must be 3 to 39 characters of letters, digits, - and _.', expect.stringMatching(/^Must be at least \d+ characters long\.$/)]);
    // Each message is announced with its field, and focus goes to the first bad field.
    const describedBy = (await username.getAttribute('aria-describedby')) ?? '';
    expect(await page.locator(`[id="${describedBy.split(' ').at(-1) ?? ''}"]`).innerText()).toContain('Must be 3 to 39');
    expect((await focused(page)).name).toBe('Username');
    expect(await page.locator('.form-error').innerText()).toBe('Please correct the highlighted fields.');
    await screenshot(page, 'signup-validation-errors');

    await username.fill(USERNAME);
    await password.fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'API tokens', level: 1 }).isVisible()).toBe(true);
    expect(await page.locator('#who').innerText()).toBe(USERNAME);
    await expect.poll(() => page.locator('.list-state').innerText()).toContain('No API tokens yet');
    await screenshot(page, 'tokens-empty');
    jwts.push(await pageJwt(page));
    // The session is per tab: sessionStorage, never localStorage.
    expect(await page.evaluate('localStorage.length')).toBe(0);
  });

  it('logs out, refuses a wrong password in plain words, and logs back in', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Log in' }).isVisible()).toBe(true);
    expect(await page.locator('#notices').innerText()).toContain('You have logged out.');
    expect(await statusWith(server.url, jwts[0] ?? '')).toBe(401);
    expect(await page.evaluate('sessionStorage.getItem("rz-auth.session")')).toBeNull();

    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill('not the password at all');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.locator('.form-error').innerText()).toBe('The email or password is incorrect.');
    await screenshot(page, 'login-wrong-password');

    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'API tokens', level: 1 }).isVisible()).toBe(true);
    jwts.push(await pageJwt(page));
  });

  it('offers exactly the scopes of the API', async () => {
    await page.getByRole('button', { name: 'New token' }).click();
    const offered = await page.locator('input[name="scopes"]').evaluateAll((inputs) => inputs.map((i) => (i as unknown as { value: string }).value));
    expect(offered).toEqual([...SCOPES]);
  });

  it('shows token validation errors next to their fields', async () => {
    await page.getByRole('button', { name: 'Create token' }).click();
    await expect.poll(() => page.getByLabel('Name').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.field-error:visible').allInnerTexts()).toEqual(['Give the token a name.']);

    await page.getByLabel('Name').fill('expired on arrival');
    await page.getByLabel('Expiration').selectOption('custom');
    await page.getByLabel('Expires at the end of').fill('2020-01-01');
    await page.getByRole('button', { name: 'Create token' }).click();
    await expect.poll(() => page.locator('.field-error:visible').allInnerTexts()).toEqual(['Must be in the future.']);
    expect(await page.getByLabel('Expires at the end of').getAttribute('aria-invalid')).toBe('true');
    expect((await focused(page)).name).toBe('Expires at the end of');
    await screenshot(page, 'token-validation-error');
  });

  it('creates a token with chosen scopes and expiry, shown once with a copy button', async () => {
    await page.getByLabel('Name').fill('deploy script');
    await page.getByLabel('apps:read').check();
    await page.getByLabel('tokens:read').check();
    await page.getByLabel('Expiration').selectOption('90');
    await page.getByRole('button', { name: 'Create token' }).click();

    const value = await shownOnce(page, 'New API token value');
    expect(value).toMatch(/^rz_[0-9A-Za-z]{49}$/);
    secrets.push(value);
    expect((await focused(page)).name).toBe('Your new token “deploy script”');
    await screenshot(page, 'token-shown-once');

    await page.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => page.locator('.copy-status').innerText()).toBe('Copied to the clipboard.');
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(value);

    // The copied value is a working token with the chosen scopes.
    const me = (await (await api(server.url, 'GET', '/api/me', value)).json()) as { auth: { scopes: string[]; expires_at: string } };
    expect(me.auth.scopes).toEqual(['apps:read', 'tokens:read']);
    const days = (Date.parse(me.auth.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(89.9);
    expect(days).toBeLessThan(90.1);

    await page.getByRole('button', { name: 'Done, I have stored it safely' }).click();
    expect(await page.locator('.secret').count()).toBe(0);
    expect(await page.content()).not.toContain(value);
    expect((await focused(page)).name).toBe('Your tokens');

    const item = page.locator('.item', { hasText: 'deploy script' });
    await expect.poll(() => item.count()).toBe(1);
    const text = await item.innerText();
    expect(text).toContain(`rz_…${value.slice(-4)}`);
    expect(text).toContain('apps:read');
    expect(text).toContain('tokens:read');
    expect(text).toMatch(/Last used\s*Never/);
    expect(text).toMatch(/Expires\s*\w{3} \d{1,2}, \d{4} \(in 3 months\)/);
    await screenshot(page, 'tokens-list');
  });

  it('revokes a token only after confirmation; the token then gets 401', async () => {
    const value = secrets[0] ?? '';
    await page.getByRole('button', { name: 'Revoke token deploy script' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke “deploy script”?' });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    expect((await focused(page)).name).toBe('Cancel');
    await screenshot(page, 'revoke-confirmation');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await statusWith(server.url, value)).toBe(200);
    expect(await page.locator('.item', { hasText: 'deploy script' }).count()).toBe(1);

    await page.getByRole('button', { name: 'Revoke token deploy script' }).click();
    await dialog.getByRole('button', { name: 'Revoke token' }).click();
    await expect.poll(() => page.locator('#notices').innerText()).toContain('Token “deploy script” revoked.');
    await expect.poll(() => page.locator('.item', { hasText: 'deploy script' }).count()).toBe(0);
    expect(await statusWith(server.url, value)).toBe(401);
  });

  it('registers an app with its token shown once, issues another, revokes each, deletes the app', async () => {
    await page.getByRole('link', { name: 'Apps' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Apps', level: 1 }).isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Register app' }).first().click();
    await page.getByLabel('Name').fill('Space Invaders');
    await page.getByLabel('Description').fill('A retro shooter.');
    await page.locator('form').getByRole('button', { name: 'Register app' }).click();
    const first = await shownOnce(page, 'New app token value');
    expect(first).toMatch(/^rza_[0-9A-Za-z]{49}$/);
    secrets.push(first);
    await screenshot(page, 'app-registered-token-shown-once');
    expect(((await (await api(server.url, 'GET', '/api/me', first)).json()) as { app: { name: string } }).app.name).toBe('Space Invaders');
    await page.getByRole('button', { name: 'Done, I have stored it safely' }).click();

    await page.getByRole('button', { name: 'Issue token for Space Invaders' }).click();
    const second = await shownOnce(page, 'New app token value');
    expect(second).toMatch(/^rza_/);
    expect(second).not.toBe(first);
    secrets.push(second);
    await page.getByRole('button', { name: 'Done, I have stored it safely' }).click();
    expect(await page.content()).not.toContain(second);
    // Both tokens are listed under the app at once, by hint and never by value. (This server's
    // clock stands still, so both were created at the same instant: their order is not checked here.)
    const app = page.locator('.item', { hasText: 'Space Invaders' });
    const hints = async () => (await app.locator('.app-token code.hint-code').allInnerTexts()).sort();
    await expect.poll(hints).toEqual([`rza_…${second.slice(-4)}`, `rza_…${first.slice(-4)}`].sort());
    await screenshot(page, 'apps-with-tokens');

    // Revoke the additional token in place, after confirmation.
    await page.getByRole('button', { name: `Revoke token rza_…${second.slice(-4)} of Space Invaders` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke token' }).click();
    await expect.poll(() => app.locator('.app-token').count()).toBe(1);
    expect(await statusWith(server.url, second)).toBe(401);
    expect(await statusWith(server.url, first)).toBe(200);

    // And the first one: the app is then told to have no active token.
    await page.getByRole('button', { name: `Revoke token rza_…${first.slice(-4)} of Space Invaders` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke token' }).click();
    await expect.poll(() => page.locator('#notices').innerText()).toContain(`Token rza_…${first.slice(-4)} of Space Invaders revoked.`);
    expect(await statusWith(server.url, first)).toBe(401);
    await expect.poll(() => app.locator('.app-tokens').innerText()).toContain('No active token');
    await screenshot(page, 'app-tokens-revoked');

    // Delete the app, after confirmation.
    await page.getByRole('button', { name: 'Issue token for Space Invaders' }).click();
    const third = await shownOnce(page, 'New app token value');
    secrets.push(third);
    await page.getByRole('button', { name: 'Done, I have stored it safely' }).click();
    await page.getByRole('button', { name: 'Delete app Space Invaders' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete “Space Invaders”?' });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await screenshot(page, 'delete-app-confirmation');
    await dialog.getByRole('button', { name: 'Delete app' }).click();
    await expect.poll(() => page.locator('.list-state').innerText()).toContain('No apps yet');
    expect(await statusWith(server.url, third)).toBe(401);
  });

  it('returns to the login screen with a message when the session ends elsewhere, then back to the same screen', async () => {
    const jwt = await pageJwt(page);
    jwts.push(jwt);
    expect((await api(server.url, 'POST', '/api/auth/logout', jwt)).status).toBe(204);
    await page.getByRole('button', { name: 'Register app' }).first().click();
    await page.getByLabel('Name').fill('Never registered');
    await page.locator('form').getByRole('button', { name: 'Register app' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Log in' }).isVisible()).toBe(true);
    expect(await page.locator('#notices').innerText()).toContain('Your session ended, please log in again.');
    expect(await page.evaluate('sessionStorage.getItem("rz-auth.session")')).toBeNull();
    await screenshot(page, 'session-ended');

    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('heading', { name: 'Apps', level: 1 }).isVisible()).toBe(true);
    jwts.push(await pageJwt(page));
  });

  it('works with the keyboard alone: log in, create a token, copy it, revoke it', async () => {
    const tab = await context.newPage();
    await tab.goto(`${server.url}/developers`);
    await tabTo(tab, 'a', 'Skip to content', 1);
    await tabTo(tab, 'input', 'Email');
    await tab.keyboard.type(EMAIL);
    await tabTo(tab, 'input', 'Password', 1);
    await tab.keyboard.type(PASSWORD);
    await tab.keyboard.press('Enter');
    await expect.poll(async () => (await focused(tab)).name).toBe('API tokens');
    jwts.push(await pageJwt(tab));

    await tabTo(tab, 'button', 'New token');
    await tab.keyboard.press('Enter');
    expect(await focused(tab)).toMatchObject({ tag: 'input', name: 'Name' });
    await tab.keyboard.type('keyboard token');
    await tabTo(tab, 'input', 'tokens:read');
    await tab.keyboard.press('Space');
    await tabTo(tab, 'select', 'Expiration');
    await tab.keyboard.press('ArrowDown'); // 30 days → 90 days
    await tabTo(tab, 'button', 'Create token');
    await tab.keyboard.press('Enter');
    await expect.poll(async () => (await focused(tab)).name).toBe('Your new token “keyboard token”');
    await tabTo(tab, 'button', 'Copy');
    await tab.keyboard.press('Enter');
    await expect.poll(() => tab.locator('.copy-status').innerText()).toBe('Copied to the clipboard.');
    const value = (await tab.evaluate('navigator.clipboard.readText()')) as string;
    secrets.push(value);
    expect(((await (await api(server.url, 'GET', '/api/me', value)).json()) as { auth: { scopes: string[] } }).auth.scopes).toEqual(['tokens:read']);
    await tabTo(tab, 'button', 'Done');
    await tab.keyboard.press('Enter');
    expect((await focused(tab)).name).toBe('Your tokens');
    await expect.poll(() => tab.locator('.item', { hasText: 'keyboard token' }).count()).toBe(1);

    await tabTo(tab, 'button', 'Revoke token keyboard token');
    await tab.keyboard.press('Enter');
    expect((await focused(tab)).name).toBe('Cancel');
    await tab.keyboard.press('Escape');
    expect(await tab.getByRole('dialog').count()).toBe(0);
    expect((await focused(tab)).name).toBe('Revoke token keyboard token');
    await tab.keyboard.press('Enter');
    await tab.keyboard.press('Tab');
    expect((await focused(tab)).name).toBe('Revoke token');
    await tab.keyboard.press('Enter');
    await expect.poll(() => statusWith(server.url, value)).toBe(401);
    await screenshot(tab, 'keyboard-flow-done');
    await tab.close();
  });

  it('fits a phone screen (360×740) without sideways scrolling', async () => {
    const phone = await openContext(browser, server.url, watch, { viewport: { width: 360, height: 740 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    const tab = await phone.newPage();
    await tab.goto(`${server.url}/developers#tokens`);
    await screenshot(tab, 'phone-login');
    await tab.getByLabel('Email').fill(EMAIL);
    await tab.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await tab.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => tab.getByRole('heading', { name: 'API tokens', level: 1 }).isVisible()).toBe(true);
    jwts.push(await pageJwt(tab));
    await tab.getByRole('button', { name: 'New token' }).click();
    await tab.getByLabel('Name').fill('phone token with a rather long name to wrap');
    await tab.getByLabel('apps:write').check();
    await screenshot(tab, 'phone-new-token-form');
    await tab.getByRole('button', { name: 'Create token' }).click();
    secrets.push(await shownOnce(tab, 'New API token value'));
    await screenshot(tab, 'phone-token-shown-once');
    await tab.getByRole('button', { name: 'Done, I have stored it safely' }).click();
    await expect.poll(() => tab.locator('.item').count()).toBe(1);
    expect(await tab.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    await screenshot(tab, 'phone-tokens-list');
    await tab.getByRole('link', { name: 'Apps' }).click();
    await tab.getByRole('button', { name: 'Register app' }).first().click();
    await tab.getByLabel('Name').fill('Pocket Game');
    await tab.locator('form').getByRole('button', { name: 'Register app' }).click();
    secrets.push(await shownOnce(tab, 'New app token value'));
    await tab.getByRole('button', { name: 'Done, I have stored it safely' }).click();
    await expect.poll(() => tab.locator('.item').count()).toBe(1);
    expect(await tab.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    await screenshot(tab, 'phone-apps');
    await phone.close();
  });

  it('follows the dark colour scheme', async () => {
    const dark = await openContext(browser, server.url, watch, { colorScheme: 'dark' });
    const tab = await dark.newPage();
    await tab.goto(`${server.url}/developers`);
    await tab.getByLabel('Email').fill(EMAIL);
    await tab.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await tab.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => tab.locator('.item').count()).toBe(1);
    jwts.push(await pageJwt(tab));
    expect(await tab.evaluate('getComputedStyle(document.body).backgroundColor')).toBe('rgb(14, 16, 20)');
    await screenshot(tab, 'dark-tokens-list');
    await dark.close();
  });

  it('returns to the login screen when the user token expires', async () => {
    // The page is on the Apps screen from the session test above; its token is an hour old now.
    const jwt = await pageJwt(page);
    expect(await statusWith(server.url, jwt)).toBe(200);
    clock.advance(3600 * 1000 + 1000);
    await page.getByRole('link', { name: 'API tokens' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Log in' }).isVisible()).toBe(true);
    expect(await page.locator('#notices').innerText()).toContain('Your session ended, please log in again.');
    expect(await statusWith(server.url, jwt)).toBe(401);
  });

  it('never puts a credential in a URL or a log line, and causes no console error or CSP violation', () => {
    expect(watch.urls.length).toBeGreaterThan(20);
    expect(jwts.filter((j) => j.startsWith('eyJ')).length).toBeGreaterThanOrEqual(6);
    for (const url of watch.urls) {
      expect(url).not.toContain('eyJ');
      expect(url).not.toMatch(TOKEN_SHAPED);
    }
    const logs = server.logs.join('');
    expect(logs).toContain('"url":"/api/tokens"');
    for (const secret of [...jwts, ...secrets]) {
      expect(secret.length).toBeGreaterThan(40);
      expect(logs).not.toContain(secret);
      for (const url of watch.urls) expect(url).not.toContain(secret);
    }
    expect(watch.cspViolations).toEqual([]);
    expect(watch.consoleErrors).toEqual([]);
  });
});

describe.skipIf(!run)('Developers page under rate limits', { timeout: 60_000 }, () => {
  let server: Served;
  let browser: Browser;
  const watch: Watch = { urls: [], consoleErrors: [], cspViolations: [] };

  beforeAll(async () => {
    server = await serve({ RATE_LIMITS: 'on', RATE_LIMIT_CREDENTIAL: '3/60', RATE_LIMIT_LOGIN_EMAIL: '2/600' });
    browser = await launch();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('tells the person how long to wait after a 429', async () => {
    const signup = await api(server.url, 'POST', '/api/auth/signup', undefined, { email: EMAIL, username: USERNAME, password: PASSWORD });
    expect(signup.status).toBe(201);
    const context = await openContext(browser, server.url, watch);
    const page = await context.newPage();
    await page.goto(`${server.url}/developers`);

    // Login: two attempts per email per 10 minutes here; the third is refused with the wait.
    const form = page.locator('form');
    for (const password of ['wrong password one', 'wrong password two', PASSWORD]) {
      await page.getByLabel('Email').fill(EMAIL);
      await page.getByLabel('Password', { exact: true }).fill(password);
      await page.getByRole('button', { name: 'Log in' }).click();
      await expect.poll(() => form.getAttribute('aria-busy')).toBe('false');
    }
    expect(await page.locator('.form-error').innerText()).toBe('Too many requests. Please wait 10 minutes and try again.');
    await screenshot(page, 'rate-limited-login');

    // Another account: three authenticated requests a minute here. Listing the tokens, creating
    // one and listing again spend them; creating a second one must wait.
    const other = await api(server.url, 'POST', '/api/auth/signup', undefined, { email: 'grace@example.com', username: 'grace', password: PASSWORD });
    expect(other.status).toBe(201);
    await page.getByLabel('Email').fill('grace@example.com');
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'API tokens', level: 1 }).isVisible()).toBe(true);
    await page.getByRole('button', { name: 'New token' }).click();
    await page.getByLabel('Name').fill('one');
    await page.getByRole('button', { name: 'Create token' }).click();
    await shownOnce(page, 'New API token value');
    await page.getByRole('button', { name: 'Done, I have stored it safely' }).click();
    await page.getByRole('button', { name: 'New token' }).click();
    await page.getByLabel('Name').fill('two');
    await page.getByRole('button', { name: 'Create token' }).click();
    await expect.poll(() => page.locator('.form-error').innerText()).toMatch(/^Too many requests\. Please wait (\d+) seconds? and try again\.$/);
    const seconds = Number(/wait (\d+)/.exec(await page.locator('.form-error').innerText())?.[1]);
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThanOrEqual(60);
    await screenshot(page, 'rate-limited-create-token');
    await context.close();
    expect(watch.cspViolations).toEqual([]);
    expect(watch.consoleErrors).toEqual([]);
  });
});
