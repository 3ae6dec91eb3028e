import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD } from '../helpers/api.js';
import { browserAvailable, launch, openContext, screenshot, serve, type Served, type Watch } from './harness.js';

/*
 * The Account screen of the Developers page in chromium, against the real server: the sessions
 * list (address, browser, the current one marked) with ending one or all others, changing the
 * password, and deleting the account after a confirmation that names what goes with it.
 */

const EMAIL = 'katherine@example.com';
const NEW_PASSWORD = 'orbital mechanics by hand, twice checked';
const GROUP = 'account';
const run = browserAvailable();

describe.skipIf(!run)('the Account screen in chromium', { timeout: 60_000 }, () => {
  let server: Served;
  let browser: Browser;
  let page: Page;
  const watch: Watch = { urls: [], consoleErrors: [], cspViolations: [] };

  const call = (method: string, path: string, token?: string, body?: unknown, agent = 'Deploy-Bot/3.1') =>
    fetch(`${server.url}${path}`, {
      method,
      headers: { 'user-agent': agent, ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const loginByApi = async (password = PASSWORD, agent?: string): Promise<string> => {
    const res = await call('POST', '/api/auth/login', undefined, { email: EMAIL, password }, agent);
    expect(res.status).toBe(200);
    return ((await res.json()) as { token: string }).token;
  };
  const statusOf = async (token: string) => (await call('GET', '/api/me', token)).status;
  const notices = () => page.locator('#notices').innerText();
  const items = () => page.locator('li.item');
  const dialog = () => page.getByRole('dialog');

  beforeAll(async () => {
    server = await serve();
    const signup = await call('POST', '/api/auth/signup', undefined, { email: EMAIL, username: 'katherine', password: PASSWORD });
    expect(signup.status).toBe(201);
    browser = await launch();
    page = await (await openContext(browser, server.url, watch)).newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('logging in from #account returns there', async () => {
    await page.goto(`${server.url}/developers#account`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Account', level: 1 }).isVisible()).toBe(true);
  });

  it('lists the sessions with address and browser, this one marked; ends one, then all others', async () => {
    const phone = await loginByApi(PASSWORD, 'Phone-App/1.0');
    const laptop = await loginByApi(PASSWORD, 'Laptop-CLI/2.0');
    await page.reload();
    await expect.poll(() => items().count()).toBe(4);
    const current = page.locator('li.item-current');
    expect(await current.innerText()).toMatch(/HeadlessChrome[\s\S]*127\.0\.0\.1[\s\S]*This session/);
    expect(await page.getByRole('link', { name: 'Account' }).getAttribute('aria-current')).toBe('page');
    await screenshot(page, 'sessions', GROUP);

    const phoneItem = items().filter({ hasText: 'Phone-App/1.0' });
    await phoneItem.getByRole('button', { name: /End session/ }).click();
    expect(await dialog().innerText()).toContain('Phone-App/1.0 from 127.0.0.1 will be signed out');
    await dialog().getByRole('button', { name: 'Cancel' }).click();
    expect(await statusOf(phone)).toBe(200);
    await phoneItem.getByRole('button', { name: /End session/ }).click();
    await dialog().getByRole('button', { name: 'End session' }).click();
    await expect.poll(notices).toContain('Session ended.');
    expect(await statusOf(phone)).toBe(401);
    await expect.poll(() => items().count()).toBe(3);

    await page.getByRole('button', { name: 'End all other sessions' }).click();
    await dialog().getByRole('button', { name: 'End other sessions' }).click();
    await expect.poll(notices).toContain('Every other session ended.');
    expect(await statusOf(laptop)).toBe(401);
    await expect.poll(() => items().count()).toBe(1);
    expect(await page.getByRole('button', { name: 'End all other sessions' }).isVisible()).toBe(false);
  });

  it('changes the password: a wrong current one and a weak new one are told at their fields, the session stays', async () => {
    const elsewhere = await loginByApi();
    const current = page.getByLabel('Current password', { exact: true });
    const next = page.getByLabel('New password', { exact: true });
    await current.fill('not my password at all');
    await next.fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect.poll(() => page.getByText('This is not your current password.').isVisible()).toBe(true);
    expect(await current.getAttribute('aria-invalid')).toBe('true');
    // Still signed in: a wrong password is not an ended session.
    expect(await page.getByRole('heading', { name: 'Account', level: 1 }).isVisible()).toBe(true);

    await current.fill(PASSWORD);
    await next.fill('too short');
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect.poll(() => next.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.field-error:visible').innerText()).toMatch(/at least 15 characters/);
    await screenshot(page, 'password-errors', GROUP);

    await next.fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect.poll(notices).toContain('Password changed.');
    expect(await statusOf(elsewhere)).toBe(401);
    expect(await current.inputValue()).toBe('');
    expect((await call('POST', '/api/auth/login', undefined, { email: EMAIL, password: PASSWORD })).status).toBe(401);
  });

  it('deletes the account after the password and a confirmation naming what is lost', async () => {
    const jwt = await loginByApi(NEW_PASSWORD);
    const token = await call('POST', '/api/tokens', jwt, { name: 'ci' });
    const apiToken = ((await token.json()) as { token: string }).token;
    for (const name of ['Game one', 'Game two']) expect((await call('POST', '/api/apps', jwt, { name })).status).toBe(201);
    const password = page.getByLabel('Password', { exact: true });

    await password.fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Delete account…' }).click();
    const question = await dialog().innerText();
    expect(question).toContain('Delete the account “katherine”?');
    expect(question).toContain('1 API token, 2 apps with all their app tokens, and 2 sessions');
    await screenshot(page, 'delete-confirmation', GROUP);
    await dialog().getByRole('button', { name: 'Cancel' }).click();
    expect(await statusOf(apiToken)).toBe(200);

    await password.fill('not my password at all');
    await page.getByRole('button', { name: 'Delete account…' }).click();
    await dialog().getByRole('button', { name: 'Delete my account' }).click();
    await expect.poll(() => page.getByText('This is not your password.').isVisible()).toBe(true);
    expect(await statusOf(apiToken)).toBe(200);

    await password.fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Delete account…' }).click();
    await dialog().getByRole('button', { name: 'Delete my account' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Log in' }).isVisible()).toBe(true);
    expect(await notices()).toContain('Your account has been deleted');
    expect(await page.evaluate('sessionStorage.getItem("rz-auth.session")')).toBeNull();
    expect(await statusOf(apiToken)).toBe(401);
    expect(await statusOf(jwt)).toBe(401);
    expect((await call('POST', '/api/auth/login', undefined, { email: EMAIL, password: NEW_PASSWORD })).status).toBe(401);
    await screenshot(page, 'deleted', GROUP);
  });

  it('broke no CSP rule and logged no unexpected error', () => {
    expect(watch.cspViolations).toEqual([]);
    expect(watch.consoleErrors).toEqual([]);
  });
});
