import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Answer, AuditEvent } from '../../types/api.js';
import { browserAvailable, focused, screenshot, signedIn, tabTo, type Served, type SignedIn, type Watch } from './harness.js';

/*
 * The Security log screen (GET /api/audit) and the token list's "revoked because leaked" state in
 * chromium, against the real server: events appear after the actions that caused them, newest
 * first and in words; the type filter and "Load more" page through them; a token reported to
 * POST /api/tokens/leaked shows in the token list as such, by the name the log knows it by.
 */

const EMAIL = 'grace@example.com';
const GROUP = 'security-log';
const AGENT = 'Deploy-Bot/3.1';
const run = browserAvailable();

describe.skipIf(!run)('Developers page: security log and leaked tokens', { timeout: 60_000 }, () => {
  let session: SignedIn | undefined;
  let server: Served;
  let page: Page;
  let jwt = '';
  const watch: Watch = { urls: [], consoleErrors: [], cspViolations: [] };

  const call = async (method: string, path: string, token?: string, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { 'user-agent': AGENT, ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: response.status === 204 ? {} : ((await response.json()) as Record<string, unknown>) };
  };
  const createToken = async (name: string, scopes: string[] = []) => {
    const created = await call('POST', '/api/tokens', jwt, { name, scopes });
    expect(created.status).toBe(201);
    return created.body as { id: string; token: string };
  };
  const events = () => page.locator('li.event');
  const titles = () => events().locator('h3').allInnerTexts();
  const typeFilter = () => page.getByLabel('Show', { exact: true });

  beforeAll(async () => {
    session = await signedIn(EMAIL, 'grace', watch);
    ({ server, page, jwt } = session);
  });
  afterAll(() => session?.close());

  it('shows the events of the actions just made, newest first, each in words with who, address and client', async () => {
    await createToken('deploy script', ['tokens:read']);
    await page.getByRole('link', { name: 'Security log' }).click();
    await page.getByRole('heading', { name: 'Security log', level: 1 }).waitFor();
    expect(await page.getByRole('link', { name: 'Security log' }).getAttribute('aria-current')).toBe('page');
    await expect.poll(titles).toEqual(['API token “deploy script” created with tokens:read', 'Logged in', 'You signed up']);
    const newest = await events().first().innerText();
    expect(newest).toContain('token.created');
    expect(newest).toMatch(/By\s+You \(logged in\)/);
    expect(newest).toMatch(/IP address\s+(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)/);
    expect(newest).toContain(AGENT);
    expect(newest).toMatch(/Request id\s+\S+/);
    expect(await events().nth(1).innerText()).toContain('HeadlessChrome');
    expect(await page.getByRole('status').filter({ hasText: 'Showing' }).innerText()).toBe('Showing 3 events.');
    expect(await page.getByRole('button', { name: 'Load more' }).isVisible()).toBe(false);

    // Actions in another tab show on Refresh, on top.
    await call('DELETE', `/api/tokens/${(await createToken('short-lived')).id}`, jwt);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(async () => (await titles()).slice(0, 2)).toEqual(['API token “short-lived” revoked', 'API token “short-lived” created']);
    await screenshot(page, 'log', GROUP);
  });

  it('a token reported leaked shows in the token list as revoked, after the active ones, by its name', async () => {
    const leaked = await createToken('laptop CLI');
    // Renamed, then rotated: the list still knows the token made by the rotation by its name.
    expect((await call('PATCH', `/api/tokens/${leaked.id}`, jwt, { name: 'old laptop CLI' })).status).toBe(200);
    const rotated = await call('POST', `/api/tokens/${leaked.id}/rotate`, jwt, { grace_seconds: 0 });
    expect(rotated.status).toBe(201);
    const value = (rotated.body as { token: string }).token;
    expect((await call('POST', '/api/tokens/leaked', undefined, { tokens: [value, 'rz_not-a-token'] })).status).toBe(202);
    expect((await call('GET', '/api/me', value)).status).toBe(401);

    await page.getByRole('link', { name: 'API tokens' }).click();
    const item = page.locator('li.item-leaked');
    await expect.poll(() => item.count()).toBe(1);
    const text = await item.innerText();
    expect(text).toContain('old laptop CLI');
    expect(text).toContain('Revoked: reported leaked');
    expect(text).toContain(`rz_…${value.slice(-4)}`);
    expect(text).toMatch(/Reported\s+\w{3} \d+, \d{4}/);
    expect(text).not.toContain(value);
    // After every active token, and with nothing to click: it is gone for good.
    expect(await page.locator('li.item').last().getAttribute('class')).toContain('item-leaked');
    expect(await item.getByRole('button').count()).toBe(0);
    await screenshot(page, 'leaked-token', GROUP);

    await page.getByRole('link', { name: 'Security log' }).click();
    await typeFilter().selectOption('token.leaked');
    await expect.poll(titles).toEqual(['API token “old laptop CLI” reported leaked and revoked']);
    expect(await events().first().innerText()).toMatch(/By\s+Someone without a credential/);
  });

  it('filters by type from the keyboard, and pages with Load more', async () => {
    for (let i = 0; i < 50; i++) await createToken(`bulk ${i}`);
    await typeFilter().selectOption('');
    await page.getByRole('link', { name: 'Security log' }).focus();
    await tabTo(page, 'select', 'Show');
    // Down the list one type at a time, as a keyboard does: each step reloads, the last one wins.
    const steps = (await typeFilter().locator('option').evaluateAll((options) => options.map((o) => (o as unknown as { value: string }).value))).indexOf('token.revoked');
    for (let i = 0; i < steps; i++) await page.keyboard.press('ArrowDown');
    expect(await typeFilter().inputValue()).toBe('token.revoked');
    await expect.poll(titles).toEqual(['API token “short-lived” revoked']);
    await typeFilter().selectOption('app.registered');
    await expect.poll(() => page.locator('.list-state').innerText()).toBe('No events of this type.');

    await typeFilter().selectOption('token.created');
    await expect.poll(() => events().count()).toBe(50);
    expect(await events().first().locator('h3').innerText()).toBe('API token “bulk 49” created');
    expect(await page.getByRole('status').filter({ hasText: 'Showing' }).innerText()).toBe('Showing 50 events; there are older ones.');
    await tabTo(page, 'button', 'Load more', 400);
    await page.keyboard.press('Enter');
    await expect.poll(() => events().count()).toBe(53);
    // Focus continues at the first event loaded, and the list is the log in order, with no repeat.
    expect((await focused(page)).name).toBe('API token “laptop CLI” created');
    const all = await titles();
    expect(all.slice(48)).toEqual([
      'API token “bulk 1” created',
      'API token “bulk 0” created',
      'API token “laptop CLI” created',
      'API token “short-lived” created',
      'API token “deploy script” created with tokens:read',
    ]);
    expect(new Set(all).size).toBe(53);
    expect(await page.getByRole('button', { name: 'Load more' }).isVisible()).toBe(false);
    expect(new Set((await events().evaluateAll((items) => items.map((i) => i.getAttribute('data-type')))))).toEqual(new Set(['token.created']));
  });

  it('an app token reported leaked shows under its app, after the active ones', async () => {
    const registered = await call('POST', '/api/apps', jwt, { name: 'Pinball' });
    expect(registered.status).toBe(201);
    const { id: appId, token: value } = registered.body as { id: string; token: string };
    const issued = await call('POST', `/api/apps/${appId}/tokens`, jwt);
    expect(issued.status).toBe(201);
    expect((await call('POST', '/api/tokens/leaked', undefined, { tokens: [value] })).status).toBe(202);

    await page.getByRole('link', { name: 'Apps' }).click();
    const app = page.locator('li.item-app', { hasText: 'Pinball' });
    await expect.poll(() => app.locator('li.app-token').count()).toBe(2);
    const last = app.locator('li.app-token').last();
    expect(await last.getAttribute('class')).toContain('item-leaked');
    const text = await last.innerText();
    expect(text).toContain('Revoked: reported leaked');
    expect(text).toContain(`rza_…${value.slice(-4)}`);
    expect(await last.getByRole('button').count()).toBe(0);
    expect(await app.locator('li.app-token').first().getByRole('button', { name: /Revoke/ }).count()).toBe(1);
    // The leaked API token stays on the API tokens screen only.
    expect(await page.locator('li.item-leaked').count()).toBe(1);
    await screenshot(page, 'leaked-app-token', GROUP);
  });

  it('token.expired said "its rotation grace period was over" for every expiry: now it says which end it was', async () => {
    // The sweeps that record token.expired do not run in this server, so the log is answered here,
    // in the document's own shape: one token at its expiry, one at the end of a rotation's grace.
    const expired = (id: string, name: string, reason: 'lifetime_ended' | 'rotation_grace_ended'): AuditEvent => ({
      id: randomUUID(),
      type: 'token.expired',
      occurred_at: new Date().toISOString(),
      actor: { type: 'system', id: null },
      subject: { type: 'token', id },
      ip: null,
      user_agent: null,
      request_id: null,
      details: { token_type: 'api_token', name, reason },
    });
    const log: Answer<'listAuditEvents'> = { events: [expired(randomUUID(), 'nightly', 'lifetime_ended'), expired(randomUUID(), 'deploy', 'rotation_grace_ended')], next_cursor: null };
    await page.route('**/api/audit?*', (route) => route.fulfill({ json: log }));
    try {
      await page.getByRole('link', { name: 'Security log' }).click();
      await typeFilter().selectOption('token.expired');
      await expect.poll(titles).toEqual(['API token “nightly” expired: it reached its expiry date', 'API token “deploy” expired: its rotation grace period was over']);
      expect(await typeFilter().locator('option:checked').innerText()).toBe('Tokens expired');
    } finally {
      await page.unroute('**/api/audit?*');
    }
  });

  it('broke no CSP rule and logged no unexpected error', () => {
    expect(watch.cspViolations).toEqual([]);
    expect(watch.consoleErrors).toEqual([]);
  });
});
