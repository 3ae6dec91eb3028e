import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/app.js';
import { scopesFileEnv } from '../helpers/scopes.js';
import { browserAvailable, launch, logIn, openContext, screenshot, serve, signUp, type Served, type Watch } from './harness.js';

/*
 * The Developers page with the platform's own scopes (SCOPES_FILE): the pickers offer what
 * GET /api/scopes lists for each kind of token, with descriptions, and scopes show wherever
 * tokens are shown.
 */

interface Scope {
  readonly name: string;
  readonly description: string;
  readonly token_types: readonly string[];
}

const EMAIL = 'grace@example.com';
const run = browserAvailable();

describe.skipIf(!run)('Developers page with platform scopes', { timeout: 60_000 }, () => {
  const files = tempDir();
  let server: Served;
  let browser: Browser;
  let page: Page;
  let catalogue: Scope[];
  let publisher = '';
  const watch: Watch = { urls: [], consoleErrors: [], cspViolations: [] };

  const meScopes = async (token: string) =>
    ((await (await fetch(`${server.url}/api/me`, { headers: { authorization: `Bearer ${token}` } })).json()) as { auth: { scopes: string[] } }).auth.scopes;
  const offered = () => page.locator('input[name="scopes"]:visible').evaluateAll((inputs) => inputs.map((i) => (i as unknown as { value: string }).value));
  const shownValue = async (label: string) => {
    await expect.poll(() => page.locator('.secret').isVisible()).toBe(true);
    return page.getByLabel(label).inputValue();
  };

  beforeAll(async () => {
    server = await serve(scopesFileEnv(files.dir));
    catalogue = ((await (await fetch(`${server.url}/api/scopes`)).json()) as { scopes: Scope[] }).scopes;
    await signUp(server.url, EMAIL, 'grace');
    browser = await launch();
    page = await (await openContext(browser, server.url, watch)).newPage();
    await logIn(page, server.url, EMAIL);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    files.remove();
  });

  it('offers API tokens exactly the scopes GET /api/scopes allows them, each with its description', async () => {
    await page.getByRole('button', { name: 'New token' }).click();
    const forApi = catalogue.filter((s) => s.token_types.includes('api_token'));
    await expect.poll(offered).toEqual(forApi.map((s) => s.name));
    for (const scope of forApi) {
      const id = await page.getByLabel(scope.name, { exact: true }).getAttribute('aria-describedby');
      expect(await page.locator(`[id="${id ?? ''}"]`).innerText()).toContain(scope.description);
    }
    await screenshot(page, 'new-token', 'platform-scopes');
  });

  it('creates an API token with a platform scope, and lists it with its scopes', async () => {
    await page.getByLabel('Name').fill('publisher');
    await page.getByLabel('games:publish', { exact: true }).check();
    await page.getByLabel('apps:read', { exact: true }).check();
    await page.getByRole('button', { name: 'Create token' }).click();
    const value = await shownValue('New API token value');
    publisher = value;
    expect(await meScopes(value)).toEqual(['apps:read', 'games:publish']);
    await page.getByRole('button', { name: 'Done, I have stored it safely' }).click();
    const item = page.locator('.item', { hasText: 'publisher' });
    await expect.poll(() => item.count()).toBe(1);
    expect(await item.locator('.chips li').allInnerTexts()).toEqual(['apps:read', 'games:publish']);
  });

  it('narrows to the scopes it uses without dropping the platform scopes rz-auth cannot see used', async () => {
    // GET /api/me above used the token without needing apps:read; games:publish is checked by the platform.
    await page.getByRole('button', { name: 'Details of token publisher' }).click();
    const detail = page.locator('.token-detail');
    await expect.poll(() => detail.innerText()).toContain('Platform scopes are checked by your own services');
    await page.getByRole('button', { name: 'Narrow to the scopes it uses' }).click();
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.innerText()).toContain('It loses apps:read from');
    await dialog.getByRole('button', { name: 'Narrow token' }).click();
    await expect.poll(() => meScopes(publisher)).toEqual(['games:publish']);
  });

  it('registers an app whose first token carries the platform scopes chosen, and shows them with the token', async () => {
    await page.getByRole('link', { name: 'Apps' }).click();
    await page.getByRole('button', { name: 'Register app' }).first().click();
    const forApps = catalogue.filter((s) => s.token_types.includes('app_token')).map((s) => s.name);
    await expect.poll(offered).toEqual(forApps);
    await page.getByLabel('Name').fill('Scoreboard');
    await page.getByLabel('scores:write', { exact: true }).check();
    await screenshot(page, 'register-app', 'platform-scopes');
    await page.locator('form').getByRole('button', { name: 'Register app' }).click();
    const value = await shownValue('New app token value');
    expect(await page.locator('.secret .chips li').allInnerTexts()).toEqual(['scores:write']);
    expect(await meScopes(value)).toEqual(['scores:write']);
    await page.getByRole('button', { name: 'Done, I have stored it safely' }).click();
    const app = page.locator('.item', { hasText: 'Scoreboard' });
    await expect.poll(() => app.locator('.app-token-main > .chips li').allInnerTexts()).toEqual(['scores:write']);
  });

  it('asks for the scopes of another app token; Cancel issues nothing', async () => {
    const app = page.locator('.item', { hasText: 'Scoreboard' });
    await page.getByRole('button', { name: 'Issue token for Scoreboard' }).click();
    const dialog = page.getByRole('dialog', { name: 'Issue a token for “Scoreboard”' });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await screenshot(page, 'issue-dialog', 'platform-scopes');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await app.locator('.app-token').count()).toBe(1);

    await page.getByRole('button', { name: 'Issue token for Scoreboard' }).click();
    await dialog.getByLabel('games:publish', { exact: true }).check();
    await dialog.getByRole('button', { name: 'Issue token' }).click();
    const value = await shownValue('New app token value');
    expect(await meScopes(value)).toEqual(['games:publish']);
    await page.getByRole('button', { name: 'Done, I have stored it safely' }).click();
    // Listed at once, newest first.
    await expect.poll(() => app.locator('.app-token').count()).toBe(2);
    expect(await app.locator('.app-token-main > .chips li').allInnerTexts()).toEqual(['games:publish', 'scores:write']);
    // App tokens carry platform scopes only: rz-auth never sees them used, so it never offers to narrow them.
    expect(await meScopes(value)).toEqual(['games:publish']);
    const newest = app.locator('.app-token').first();
    await newest.getByRole('button', { name: /^Details of token rza_…/ }).click();
    await expect.poll(() => newest.locator('.token-detail').innerText()).toMatch(/Last used\s*just now/);
    expect(await newest.getByRole('button', { name: 'Narrow to the scopes it uses' }).count()).toBe(0);
    await screenshot(page, 'apps-list', 'platform-scopes');
  });

  it('causes no console error or CSP violation', () => {
    expect(watch.cspViolations).toEqual([]);
    expect(watch.consoleErrors).toEqual([]);
  });
});
