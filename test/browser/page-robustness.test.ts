import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../helpers/server-process.js';
import { type Receiver, startReceiver } from '../helpers/webhooks.js';
import { browserAvailable, type SignedIn, signedIn, type Watch } from './harness.js';

/*
 * What a hurried or interrupted person does to the Developers page: a double click on a button
 * that creates something, a session that ends while a dialog or a value shown once is on screen,
 * a name of emoji as long as the server allows.
 */

const run = browserAvailable();

describe.skipIf(!run)('Developers page under double clicks and ended sessions', { timeout: 60_000 }, () => {
  let session: SignedIn | undefined;
  let receiver: Receiver;
  let page: Page;
  let url = '';
  let jwt = '';
  const watch: Watch = { urls: [], consoleErrors: [], cspViolations: [] };

  const api = async (method: 'GET' | 'POST', path: string, body?: unknown) => (await request(url, method, path, { token: jwt, body })).body as Record<string, unknown>;

  beforeAll(async () => {
    receiver = await startReceiver();
    session = await signedIn('grace@example.com', 'grace', watch, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    ({ page, jwt } = session);
    url = session.server.url;
  });
  afterAll(async () => {
    await session?.close();
    await receiver?.close();
  });

  it('a double click on Issue token issued two app tokens and showed one value: now one token', async () => {
    const app = await api('POST', '/api/apps', { name: 'Pong' });
    await page.getByRole('link', { name: 'Apps' }).click();
    await page.getByRole('button', { name: 'Issue token for Pong' }).dblclick();
    await expect.poll(() => page.locator('.secret').count()).toBe(1);
    await page.getByRole('button', { name: 'Done, I have stored it safely' }).click();
    const { tokens } = (await api('GET', `/api/apps/${String(app.id)}/tokens`)) as { tokens: unknown[] };
    expect(tokens).toHaveLength(2);
  });

  it('a double click on Send test sent two test deliveries: now one', async () => {
    const hook = await api('POST', '/api/webhooks', { url: `${receiver.url}/hooks`, event_types: ['token.created'] });
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('button', { name: `Send test to ${receiver.url}/hooks` }).dblclick();
    await expect.poll(() => receiver.answered.filter((r) => r.body.includes('"webhook.test"')).length).toBe(1);
    // Time for a second one to arrive, had it been sent.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const { deliveries } = (await api('GET', `/api/webhooks/${String(hook.id)}/deliveries`)) as { deliveries: Array<{ event_type: string }> };
    expect(deliveries.filter((d) => d.event_type === 'webhook.test')).toHaveLength(1);
  });

  it("a name of 80 emoji, which the server takes, was cut to 50 by the field's maxlength: now kept whole", async () => {
    await page.getByRole('link', { name: 'API tokens' }).click();
    await page.getByRole('button', { name: 'New token' }).first().click();
    const name = '🔑'.repeat(80);
    await page.getByLabel('Name').fill(name);
    expect(await page.getByLabel('Name').inputValue()).toBe(name);
  });

  it('when the session ended, a confirmation stayed open over the login screen and the value shown once was wiped: now the dialog is cancelled and the value stays', async () => {
    // The page ends its session when the JWT expires: its clock is moved past that.
    await api('POST', '/api/tokens', { name: 'old' });
    await page.clock.install();
    await page.reload();
    await page.getByRole('heading', { name: 'API tokens', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'New token' }).first().click();
    await page.getByLabel('Name').fill('deploy');
    await page.locator('form').getByRole('button', { name: 'Create token' }).click();
    const value = await page.getByLabel('New API token value').inputValue();
    expect(value).toMatch(/^rz_/);
    await page.getByRole('button', { name: 'Revoke token old' }).click();
    await expect.poll(() => page.getByRole('dialog').isVisible()).toBe(true);
    await page.clock.fastForward('24:00:00');
    await page.getByRole('heading', { name: 'Log in', level: 1 }).waitFor();
    expect(await page.locator('dialog[open]').count()).toBe(0);
    // The closed dialog leaves the page on its close event, which the browser fires a task later.
    await expect.poll(() => page.locator('dialog').count()).toBe(0);
    expect(await page.getByLabel('New API token value').inputValue()).toBe(value);
    expect(await page.locator('#notices').innerText()).toContain('The new value stays shown below until you dismiss it.');
    await page.getByRole('button', { name: 'Done, I have stored it safely' }).click();
    expect(await page.content()).not.toContain(value);
  });
});
