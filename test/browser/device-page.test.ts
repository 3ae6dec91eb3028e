import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PASSWORD } from '../helpers/api.js';
import { mfaEnv } from '../helpers/mfa.js';
import { browserAvailable, launch, logIn, openContext, screenshot, serve, signUp, type Served, type Watch } from './harness.js';

/*
 * The /device screen (contract §13.7) in chromium. The real server serves the page and logs the
 * person in; the approval API it calls (§13.6) is answered by `route` below with the contract's
 * JSON, so that every state (errors, limits, step-up) can be shown on demand. The real API behind
 * the same screen, with the rz CLI waiting for the token, is test/e2e/device-login.test.ts.
 */

const EMAIL = 'ada@example.com';
const GROUP = 'device-page';
const CODE = 'WDJB-MJHT';
const NOT_VALID = 'This code is not valid any more';
const OTHER_NETWORK =
  'This request came from another network. If you did not start it yourself on a machine you control, deny it. rz-auth never asks you to enter a code you were sent.';
const run = browserAvailable();

/** A §13.6 lookup answer; `changes` overrides members. */
const lookupBody = (changes: Record<string, unknown> = {}) => ({
  user_code: CODE,
  client: { id: 'rz-cli', name: 'rz CLI' },
  device_name: 'ada-laptop',
  device_name_verified: false,
  scopes: [
    { name: 'tokens:read', description: 'List your tokens.' },
    { name: 'games:publish', description: 'Publish games.' },
  ],
  requested_at: new Date(Date.now() - 60_000).toISOString(),
  expires_at: new Date(Date.now() + 14 * 60_000).toISOString(),
  requester: { ip: '203.0.113.5', user_agent: 'rz/1.0.0 (linux; node 22)' },
  same_network: true,
  ...changes,
});

interface Answer {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}
const problem = (status: number, code: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): Answer => ({
  status,
  body: { type: `https://rz-auth.dev/problems/${code}`, title: code, status, code, detail: code, ...extra },
  headers,
});

interface Call {
  readonly path: string;
  readonly body: unknown;
  readonly authorization: string | null;
}

describe.skipIf(!run)('the /device screen in chromium', { timeout: 60_000 }, () => {
  let server: Served;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const watch: Watch = { urls: [], consoleErrors: [], cspViolations: [] };
  const calls: Call[] = [];
  /** Answers queued per path; when none is queued, lookup answers lookupBody() and approve/deny 204. */
  const queued = new Map<string, Answer[]>();
  const answer = (path: string, ...answers: Answer[]) => queued.set(`/api/device/${path}`, answers);
  const paths = () => calls.map((c) => c.path);
  const request = () => page.locator('.device-request');

  async function fulfil(route: Route): Promise<void> {
    const sent = route.request();
    const path = new URL(sent.url()).pathname;
    calls.push({ path, body: sent.postDataJSON() as unknown, authorization: await sent.headerValue('authorization') });
    const next = queued.get(path)?.shift() ?? (path.endsWith('/lookup') ? { status: 200, body: lookupBody() } : { status: 204 });
    const type = next.status >= 400 ? 'application/problem+json' : 'application/json';
    await route.fulfill({ status: next.status, headers: { 'content-type': type, ...next.headers }, ...(next.body === undefined ? {} : { body: JSON.stringify(next.body) }) });
  }

  /** Opens /device (with `query`), enters the code and continues to the request. */
  async function lookUp(query = ''): Promise<void> {
    await page.goto(`${server.url}/device${query}`);
    await page.getByRole('heading', { name: 'Connect a device', level: 1 }).waitFor();
    await page.getByLabel('Code from your terminal').fill(CODE);
    await page.getByRole('button', { name: 'Continue' }).click();
    await request().waitFor();
  }

  beforeAll(async () => {
    // MFA on, so that the re-authentication dialog can list the person's (no) second factors.
    server = await serve(mfaEnv());
    await signUp(server.url, EMAIL, 'ada');
    browser = await launch();
    context = await openContext(browser, server.url, watch);
    await context.route('**/api/device/**', fulfil);
    page = await context.newPage();
    await logIn(page, server.url, EMAIL);
  });

  beforeEach(() => {
    calls.length = 0;
    queued.clear();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    expect(watch.consoleErrors).toEqual([]);
    expect(watch.cspViolations).toEqual([]);
  });

  it('pre-fills ?user_code= normalised and out of the address bar, looks up only on Continue, and never approves by itself', async () => {
    await page.goto(`${server.url}/device?user_code=${encodeURIComponent('wdjb mjht')}`);
    const field = page.getByLabel('Code from your terminal');
    await expect.poll(() => field.inputValue()).toBe(CODE);
    expect(new URL(page.url()).search).toBe('');
    expect(calls).toEqual([]);

    // Anything outside the alphabet is refused at the field, without a request.
    await field.fill('hello-1234');
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect.poll(() => field.getAttribute('aria-invalid')).toBe('true');
    expect(calls).toEqual([]);

    await field.fill('wdjb-MJHT ');
    await page.getByRole('button', { name: 'Continue' }).click();
    await request().waitFor();
    expect(calls.map((c) => c.body)).toEqual([{ user_code: CODE }]);
    expect(paths()).not.toContain('/api/device/approve');
    // In the order of §13.7: the code to compare, the client, the device, where and when.
    const text = await request().innerText();
    const order = [`Check that your terminal shows ${CODE}`, 'rz CLI', 'ada-laptop (reported by the device)', '203.0.113.5', 'rz/1.0.0 (linux; node 22)', 'Requested', 'tokens:read', 'Token expires after', 'Approve', 'Deny'];
    const at = order.map((part) => text.indexOf(part));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(await page.locator('.user-code').innerText()).toBe(CODE);
    expect(await page.getByRole('option').allInnerTexts()).toEqual(['7 days', '30 days', '90 days']);
    await screenshot(page, 'request', GROUP);
  });

  it('shows a hostile device name as text: no element, no script, no CSP report', async () => {
    const hostile = '<img src=x onerror=alert(1)>';
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    answer('lookup', { status: 200, body: lookupBody({ device_name: hostile, client: { id: 'rz-cli', name: '<b>rz</b>' } }) });
    await lookUp();
    expect(await request().innerText()).toContain(`${hostile} (reported by the device)`);
    expect(await request().innerText()).toContain('<b>rz</b>');
    expect(await page.locator('#view img, #view b').count()).toBe(0);
    expect(dialogs).toEqual([]);
    expect(watch.consoleErrors).toEqual([]);
    expect(watch.cspViolations).toEqual([]);
  });

  it('warns, in the contract words, only when the request came from another network', async () => {
    await lookUp();
    expect(await request().innerText()).not.toContain('another network');
    answer('lookup', { status: 200, body: lookupBody({ same_network: false }) });
    await lookUp();
    expect(await page.locator('.device-warning').innerText()).toBe(OTHER_NETWORK);
    await screenshot(page, 'other-network', GROUP);
  });

  it('approves with only the scopes left checked and the chosen expiry, then says to return to the terminal', async () => {
    await lookUp();
    await page.getByRole('checkbox', { name: 'games:publish' }).uncheck();
    await page.getByLabel('Token expires after').selectOption('90');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('heading', { name: 'Done. Return to your terminal.' }).waitFor();
    expect(calls.at(-1)).toMatchObject({ path: '/api/device/approve', body: { user_code: CODE, scopes: ['tokens:read'], expires_in_days: 90 } });
    expect(await page.evaluate('sessionStorage.getItem("rz-auth.device-code")')).toBeNull();
    await screenshot(page, 'approved', GROUP);
  });

  it('denies with the code only, and approves nothing', async () => {
    await lookUp();
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.getByRole('heading', { name: 'Request denied.' }).waitFor();
    expect(paths()).toEqual(['/api/device/lookup', '/api/device/deny']);
    expect(calls.at(-1)?.body).toEqual({ user_code: CODE });
  });

  it('has words for a code that is not valid any more (404) and for too many attempts (429)', async () => {
    answer('lookup', problem(404, 'not_found'), problem(429, 'rate_limited', {}, { 'retry-after': '600' }));
    await page.goto(`${server.url}/device`);
    await page.getByLabel('Code from your terminal').fill(CODE);
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect.poll(() => page.getByRole('alert').innerText()).toContain(NOT_VALID);
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect.poll(() => page.getByRole('alert').innerText()).toContain('Too many attempts');
    expect(await page.getByRole('alert').innerText()).toContain('10 minutes');

    // The request expiring while it is shown: the same words at Approve, and a field for a new code.
    await lookUp();
    answer('approve', problem(404, 'not_found'));
    await page.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => request().getByRole('alert').innerText()).toContain(NOT_VALID);
    expect(await page.getByLabel('Code from your terminal').isVisible()).toBe(true);
    // A scope the client may no longer have (400 naming scopes).
    await lookUp();
    answer('approve', problem(400, 'validation_failed', { errors: [{ field: 'scopes', message: 'must be a subset of the requested scopes' }] }));
    await page.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => request().getByRole('alert').innerText()).toContain('not allowed one of these scopes');
  });

  it('asks a stale login to confirm it is you on Approve, then approves with the new token', async () => {
    await lookUp();
    answer('approve', problem(401, 'insufficient_user_authentication', {}, { 'www-authenticate': 'Bearer realm="rz", error="insufficient_user_authentication", max_age="900"' }));
    await page.getByRole('button', { name: 'Approve' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    await dialog.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('heading', { name: 'Done. Return to your terminal.' }).waitFor();
    const approvals = calls.filter((c) => c.path === '/api/device/approve');
    expect(approvals).toHaveLength(2);
    expect(approvals[1]?.body).toEqual(approvals[0]?.body);
    expect(approvals[1]?.authorization).toMatch(/^Bearer /);
    expect(approvals[1]?.authorization).not.toBe(approvals[0]?.authorization);
  });

  it('keeps the code of a logged-out visitor through the login in sessionStorage, not the URL', async () => {
    const fresh = await (await openContext(browser, server.url, watch)).newPage();
    await fresh.context().route('**/api/device/**', fulfil);
    await fresh.goto(`${server.url}/device?user_code=wdjbmjht`);
    await fresh.getByRole('heading', { name: 'Log in', level: 1 }).waitFor();
    expect(await fresh.locator('.lede').innerText()).toContain('approve the request from your terminal');
    expect(new URL(fresh.url()).search).toBe('');
    expect(await fresh.evaluate('sessionStorage.getItem("rz-auth.device-code")')).toBe(CODE);
    await fresh.getByLabel('Email').fill(EMAIL);
    await fresh.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await fresh.getByRole('button', { name: 'Log in' }).click();
    await fresh.getByRole('heading', { name: 'Connect a device', level: 1 }).waitFor();
    expect(await fresh.getByLabel('Code from your terminal').inputValue()).toBe(CODE);
    expect(new URL(fresh.url()).pathname).toBe('/device');
    expect(calls).toEqual([]);
    // Only the link the person opened carried the code: no request since.
    expect(watch.urls.filter((u) => u.toLowerCase().includes('wdjbmjht'))).toEqual([`${server.url}/device?user_code=wdjbmjht`]);
    await fresh.context().close();
  });
});
