import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver, verified } from '../helpers/webhooks.js';
import { browserAvailable, screenshot, signedIn, tabTo, type Served, type SignedIn, type Watch } from './harness.js';

/*
 * The Webhooks screen in chromium, against the real server and a real receiver on loopback
 * (WEBHOOK_ALLOW_PRIVATE=true, as for development): adding an endpoint shows its whsec_ secret
 * once and sends a test delivery that the receiver gets, correctly signed, and the list shows
 * succeeded; Send test adds another; a refused URL is told at its field; deleting asks first.
 */

const EMAIL = 'hedy@example.com';
const GROUP = 'webhooks';
const run = browserAvailable();

const typeOf = (request: { body: string }): unknown => (JSON.parse(request.body) as { type?: unknown }).type;

describe.skipIf(!run)('Developers page: webhooks', { timeout: 60_000 }, () => {
  let session: SignedIn | undefined;
  let server: Served;
  let receiver: Receiver;
  let hookUrl = '';
  let received: Receiver['answered'] = [];
  let page: Page;
  let jwt = '';
  let secret = '';
  const watch: Watch = { urls: [], consoleErrors: [], cspViolations: [] };

  const listed = async () => {
    const response = await fetch(`${server.url}/api/webhooks`, { headers: { authorization: `Bearer ${jwt}` } });
    return ((await response.json()) as { webhooks: { id: string; url: string }[] }).webhooks;
  };
  const endpoint = () => page.locator('li.item-webhook');
  const rows = () => endpoint().locator('tbody tr');
  const dialog = () => page.getByRole('dialog');

  beforeAll(async () => {
    receiver = await startReceiver();
    hookUrl = `${receiver.url}/hooks/rz-auth`;
    received = receiver.answered;
    session = await signedIn(EMAIL, 'hedy', watch, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    ({ server, page, jwt } = session);
  });
  afterAll(async () => {
    await session?.close();
    await receiver?.close();
  });

  it('opens from the nav with no endpoint yet', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await expect.poll(() => page.locator('.list-state').innerText()).toContain('No endpoints yet.');
  });

  it('tells what is missing, and a URL the server refuses, at their fields', async () => {
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.locator('form').getByRole('button', { name: 'Add endpoint' }).click();
    await expect.poll(() => page.getByLabel('URL').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.field-error:visible').allInnerTexts()).toEqual(['Enter the address to send events to.', 'Choose at least one event type.']);

    await page.getByLabel('URL').fill('ftp://files.example.com/hook');
    await page.getByLabel(/Logins/).check();
    await page.locator('form').getByRole('button', { name: 'Add endpoint' }).click();
    await expect.poll(() => page.getByLabel('URL').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.field-error:visible').count()).toBe(1);
    expect(await listed()).toEqual([]);
  });

  it('adds an endpoint: the secret is shown once, and the test delivery arrives signed and shows succeeded', async () => {
    await page.getByLabel('URL').fill(hookUrl);
    // Select all from the keyboard, then leave one out: the box shows mixed.
    await page.getByLabel('URL').focus();
    await tabTo(page, 'input', 'Select all');
    await page.keyboard.press('Space');
    const boxes = page.locator('input[name="event_types"]');
    expect(await boxes.evaluateAll((all) => all.every((b) => 'checked' in b && b.checked === true))).toBe(true);
    await page.getByLabel(/Failed logins/).uncheck();
    expect(await page.getByLabel('Select all').evaluate((b) => 'indeterminate' in b && b.indeterminate === true)).toBe(true);
    await page.getByLabel('Description').fill('Security alerts for the on-call phone');
    await page.locator('form').getByRole('button', { name: 'Add endpoint' }).click();

    const panel = page.locator('.secret');
    await expect.poll(() => panel.isVisible()).toBe(true);
    expect(await panel.innerText()).toMatch(/you will not see this again/i);
    secret = await page.getByLabel('Webhook signing secret').inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);

    // The test delivery, and the endpoint's own webhook.created event (it subscribed to it).
    await expect.poll(() => received.map(typeOf).sort(), { timeout: 20_000 }).toEqual(['webhook.created', 'webhook.test']);
    // Signatures checked by the standardwebhooks package, independent of rz-auth's signing.
    for (const request of received) expect(verified(secret, request).type).toBe(typeOf(request));

    const testRow = rows().filter({ hasText: 'webhook.test' });
    await expect.poll(() => testRow.getAttribute('data-status'), { timeout: 20_000 }).toBe('succeeded');
    const row = await testRow.innerText();
    expect(row).toContain('Succeeded');
    expect(row).toContain('HTTP 204');
    expect(row).toMatch(/\t1\t/); // one attempt
    await expect.poll(() => rows().filter({ hasText: 'webhook.created' }).getAttribute('data-status'), { timeout: 20_000 }).toBe('succeeded');
    const item = await endpoint().innerText();
    expect(item).toContain(hookUrl);
    expect(item).toContain('Security alerts for the on-call phone');
    expect(item).not.toContain('login.failed');
    await screenshot(page, 'added', GROUP);

    await page.getByRole('button', { name: 'Done, I have stored it safely' }).click();
    expect(await page.content()).not.toContain(secret);
  });

  it('Send test sends another, listed newest first', async () => {
    await endpoint().getByRole('button', { name: /Send test/ }).click();
    await expect.poll(() => received.filter((r) => typeOf(r) === 'webhook.test').length, { timeout: 20_000 }).toBe(2);
    await expect.poll(() => rows().count()).toBe(3);
    expect(await rows().first().innerText()).toContain('webhook.test');
    await expect.poll(() => rows().first().getAttribute('data-status'), { timeout: 20_000 }).toBe('succeeded');
    expect(new Set(received.map((r) => r.headers['webhook-id'])).size).toBe(3);
    // Screen readers hear the outcome from the list's status line.
    expect(await endpoint().locator('.deliveries [role="status"]').textContent()).toMatch(/^Latest delivery to http:\/\/127\.0\.0\.1:\d+\/hooks\/rz-auth: webhook\.test, succeeded, HTTP 204 \(\d+ ms\)\.$/);
  });

  it('deletes after a confirmation naming what stops; Cancel keeps it', async () => {
    await endpoint().getByRole('button', { name: /Delete/ }).click();
    const question = await dialog().innerText();
    expect(question).toContain(`Delete the endpoint ${hookUrl}?`);
    expect(question).toContain('stops sending events');
    await screenshot(page, 'delete-confirmation', GROUP);
    await dialog().getByRole('button', { name: 'Cancel' }).click();
    expect(await listed()).toHaveLength(1);

    await endpoint().getByRole('button', { name: /Delete/ }).click();
    await dialog().getByRole('button', { name: 'Delete endpoint' }).click();
    await expect.poll(() => page.locator('#notices').innerText()).toContain('deleted');
    await expect.poll(() => endpoint().count()).toBe(0);
    expect(await listed()).toEqual([]);
  });

  it('broke no CSP rule and logged no unexpected error', () => {
    expect(watch.cspViolations).toEqual([]);
    expect(watch.consoleErrors).toEqual([]);
  });
});
