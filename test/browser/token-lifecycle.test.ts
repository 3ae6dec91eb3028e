import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD } from '../helpers/api.js';
import { browserAvailable, launch, openContext, screenshot, serve, type Served, type Watch } from './harness.js';

/*
 * The Developers page and the token lifecycle: networks at creation, a token's details (last use,
 * the scopes it used), one-click narrowing to those scopes, and rotation with a grace period whose
 * new value is shown once.
 */

const EMAIL = 'lin@example.com';
const run = browserAvailable();

describe.skipIf(!run)('Developers page: token lifecycle', { timeout: 60_000 }, () => {
  let server: Served;
  let browser: Browser;
  let page: Page;
  const watch: Watch = { urls: [], consoleErrors: [], cspViolations: [] };

  const call = (path: string, token: string) => fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const meScopes = async (token: string) => ((await (await call('/api/me', token)).json()) as { auth: { scopes: string[] } }).auth.scopes;
  const shownValue = async (label: string) => {
    await expect.poll(() => page.locator('.secret').isVisible()).toBe(true);
    return page.getByLabel(label).inputValue();
  };
  const confirm = async (name: string) => {
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await dialog.getByRole('button', { name }).click();
  };

  beforeAll(async () => {
    server = await serve();
    const signup = await fetch(`${server.url}/api/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: EMAIL, username: 'lin', password: PASSWORD }),
    });
    expect(signup.status).toBe(201);
    browser = await launch();
    page = await (await openContext(browser, server.url, watch)).newPage();
    await page.goto(`${server.url}/developers`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'API tokens', level: 1 }).waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  let value = '';

  it('a malformed network is told next to the field, and nothing is created', async () => {
    await page.getByRole('button', { name: 'New token' }).click();
    await page.getByLabel('Name').fill('ci');
    await page.getByLabel('Networks').fill('10.0.0.0/33');
    await page.getByRole('button', { name: 'Create token' }).click();
    await expect.poll(() => page.getByLabel('Networks').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.item', { hasText: 'ci' }).count()).toBe(0);
  });

  it('creates a token limited to networks; it works from inside them', async () => {
    await page.getByLabel('Networks').fill('127.0.0.0/8\n::1/128');
    await page.getByLabel('apps:read', { exact: true }).check();
    await page.getByLabel('tokens:read', { exact: true }).check();
    await page.getByRole('button', { name: 'Create token' }).click();
    value = await shownValue('New API token value');
    expect((await call('/api/apps', value)).status).toBe(200);
    await page.getByRole('button', { name: 'Done, I have stored it safely' }).click();
  });

  it('shows its last use, address, networks and the scopes it used', async () => {
    await page.getByRole('button', { name: 'Details of token ci' }).click();
    const detail = page.locator('.token-detail');
    await expect.poll(() => detail.innerText()).toContain('127.0.0.0/8, ::1/128');
    expect(await detail.innerText()).toMatch(/from (127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)/);
    expect(await detail.locator('.chips li').allInnerTexts()).toEqual(['apps:read']);
    await screenshot(page, 'token-details', 'token-lifecycle');
  });

  it('narrows the token to the scopes it uses in one click, after a confirmation', async () => {
    await page.getByRole('button', { name: 'Narrow to the scopes it uses' }).click();
    await confirm('Narrow token');
    await expect.poll(() => meScopes(value)).toEqual(['apps:read']);
    const item = page.locator('.item', { hasText: 'ci' });
    await expect.poll(() => item.locator('.item-main > .chips li').allInnerTexts()).toEqual(['apps:read']);
  });

  it('rotates with a grace period: the new value is shown once, and both work until the grace ends', async () => {
    await page.getByRole('button', { name: 'Details of token ci' }).click();
    await page.getByLabel('Rotation').selectOption({ label: 'Keep the old value for 1 hour' });
    await page.getByRole('button', { name: 'Rotate' }).click();
    await confirm('Rotate token');
    const rotated = await shownValue('New API token value');
    expect(rotated).not.toBe(value);
    await screenshot(page, 'rotated', 'token-lifecycle');
    expect(await meScopes(rotated)).toEqual(['apps:read']);
    expect((await call('/api/me', value)).status).toBe(200);
    await page.getByRole('button', { name: 'Done, I have stored it safely' }).click();
    await expect.poll(() => page.locator('.item', { hasText: 'ci' }).count()).toBe(2);
  });

  it('causes no console error or CSP violation', () => {
    expect(watch.cspViolations).toEqual([]);
    expect(watch.consoleErrors).toEqual([]);
  });
});
