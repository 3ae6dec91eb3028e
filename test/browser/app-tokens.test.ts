import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, launch, logIn, openContext, screenshot, serve, signUp, type Served, type Watch } from './harness.js';

/*
 * The Developers page and an app's tokens: listed under the app from GET /api/apps/{id}/tokens
 * (so tokens issued elsewhere show too), with their details, rotated with a grace period and
 * revoked in place.
 */

const EMAIL = 'mae@example.com';
const run = browserAvailable();

describe.skipIf(!run)('Developers page: app tokens', { timeout: 60_000 }, () => {
  let server: Served;
  let browser: Browser;
  let page: Page;
  let app: Locator;
  const watch: Watch = { urls: [], consoleErrors: [], cspViolations: [] };
  /** Token values issued outside the page, oldest first. */
  const values: string[] = [];

  const request = (method: string, path: string, token: string) => fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${token}` } });
  const status = async (token: string) => (await request('GET', '/api/me', token)).status;
  const hintOf = (value: string) => `rza_…${value.slice(-4)}`;
  const listed = () => app.locator('.app-token code.hint-code').allInnerTexts();
  const tokenItem = (value: string) => app.locator('.app-token', { hasText: hintOf(value) });
  const confirm = async (name: string) => {
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await dialog.getByRole('button', { name }).click();
  };
  const shownValue = async () => {
    await expect.poll(() => page.locator('.secret').isVisible()).toBe(true);
    expect(await page.locator('.secret').innerText()).toMatch(/you will not see this again/i);
    return page.getByLabel('New app token value').inputValue();
  };

  beforeAll(async () => {
    server = await serve();
    const jwt = await signUp(server.url, EMAIL, 'mae');
    // An app and a second token, both issued outside the page (as a CLI or curl would).
    const registered = await fetch(`${server.url}/api/apps`, {
      method: 'POST',
      headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Tetris', description: '' }),
    });
    expect(registered.status).toBe(201);
    const { id, token } = (await registered.json()) as { id: string; token: string };
    values.push(token);
    const issued = await request('POST', `/api/apps/${id}/tokens`, jwt);
    expect(issued.status).toBe(201);
    values.push(((await issued.json()) as { token: string }).token);
    expect(await status(values[0] ?? '')).toBe(200);

    browser = await launch();
    page = await (await openContext(browser, server.url, watch)).newPage();
    await logIn(page, server.url, EMAIL, { fragment: '#apps', heading: 'Apps' });
    app = page.locator('.item', { hasText: 'Tetris' });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('lists the tokens issued elsewhere under their app, with scopes, creation, last use and expiry', async () => {
    const [first = '', second = ''] = values;
    // Issued within moments of each other, possibly in the same millisecond: their order is checked below.
    await expect.poll(async () => (await listed()).sort()).toEqual([hintOf(second), hintOf(first)].sort());
    const used = await tokenItem(first).innerText();
    expect(used).toContain('No scopes');
    expect(used).toMatch(/Created\s*\w{3} \d{1,2}, \d{4}/);
    expect(used).toMatch(/Last used\s*just now/);
    expect(used).toMatch(/Expires\s*Never/);
    expect(await tokenItem(second).innerText()).toMatch(/Last used\s*Never/);
    expect(await page.content()).not.toContain(first);
    await screenshot(page, 'app-tokens-listed', 'app-tokens');
  });

  it('shows a token\'s details: last use and its address, networks; no narrowing of platform scopes', async () => {
    const first = values[0] ?? '';
    await page.getByRole('button', { name: `Details of token ${hintOf(first)} of Tetris` }).click();
    const detail = tokenItem(first).locator('.token-detail');
    await expect.poll(() => detail.innerText()).toMatch(/from (127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)/);
    expect(await detail.innerText()).toMatch(/Networks\s*Anywhere/);
    expect(await detail.getByRole('button', { name: 'Narrow to the scopes it uses' }).count()).toBe(0);
    await screenshot(page, 'app-token-details', 'app-tokens');
  });

  it('rotates a token in place with a grace period: the new value is shown once and listed, the old one lasts the grace', async () => {
    const first = values[0] ?? '';
    await tokenItem(first).getByLabel('Rotation').selectOption({ label: 'Keep the old value for 1 hour' });
    await tokenItem(first).getByRole('button', { name: 'Rotate' }).click();
    await confirm('Rotate token');
    const rotated = await shownValue();
    expect(rotated).toMatch(/^rza_[0-9A-Za-z]{49}$/);
    await screenshot(page, 'app-token-rotated', 'app-tokens');
    const me = (await (await request('GET', '/api/me', rotated)).json()) as { app: { name: string } };
    expect(me.app.name).toBe('Tetris');
    expect(await status(first)).toBe(200);
    await page.getByRole('button', { name: 'Done, I have stored it safely' }).click();
    expect(await page.content()).not.toContain(rotated);
    // Newest first: the new token heads the list; the old one stays until its grace ends.
    await expect.poll(async () => (await listed())[0]).toBe(hintOf(rotated));
    expect((await listed()).slice(1).sort()).toEqual([hintOf(values[1] ?? ''), hintOf(first)].sort());
    expect(await tokenItem(first).innerText()).toMatch(/Expires\s*\w{3} \d{1,2}, \d{4} \(in (60 minutes|1 hour)\)/);
    values.push(rotated);
  });

  it('rotates at once: the old value stops and leaves the list', async () => {
    const second = values[1] ?? '';
    await page.getByRole('button', { name: `Details of token ${hintOf(second)} of Tetris` }).click();
    await tokenItem(second).getByRole('button', { name: 'Rotate' }).click();
    await confirm('Rotate token');
    const rotated = await shownValue();
    expect(await status(rotated)).toBe(200);
    expect(await status(second)).toBe(401);
    await page.getByRole('button', { name: 'Done, I have stored it safely' }).click();
    await expect.poll(() => tokenItem(second).count()).toBe(0);
    expect(await tokenItem(rotated).count()).toBe(1);
    values.push(rotated);
  });

  it('revokes a token in place only after a confirmation; Cancel keeps it', async () => {
    const target = values[2] ?? '';
    const button = page.getByRole('button', { name: `Revoke token ${hintOf(target)} of Tetris` });
    await button.click();
    await expect.poll(() => page.getByRole('dialog', { name: 'Revoke this token of “Tetris”?' }).isVisible()).toBe(true);
    await screenshot(page, 'app-token-revoke-confirmation', 'app-tokens');
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    expect(await status(target)).toBe(200);
    expect(await tokenItem(target).count()).toBe(1);

    await button.click();
    await confirm('Revoke token');
    await expect.poll(() => page.locator('#notices').innerText()).toContain(`Token ${hintOf(target)} of Tetris revoked.`);
    await expect.poll(() => tokenItem(target).count()).toBe(0);
    expect(await status(target)).toBe(401);
    expect(await status(values[3] ?? '')).toBe(200);
    await screenshot(page, 'app-token-revoked', 'app-tokens');
  });

  it('causes no console error or CSP violation', () => {
    expect(watch.cspViolations).toEqual([]);
    expect(watch.consoleErrors).toEqual([]);
  });
});
