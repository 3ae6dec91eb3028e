import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, signedIn, type SignedIn, type Watch } from './harness.js';

/*
 * Lists longer than one page (docs/lists.md: 50 by default, 200 at most): the Developers page reads
 * every page along next_cursor, so a person with more tokens than one page sees all of them, and
 * the account deletion's confirmation counts all of them.
 */

const run = browserAvailable();
const TOKENS = 230;

describe.skipIf(!run)('Developers page: lists longer than a page', { timeout: 90_000 }, () => {
  let signed: SignedIn;
  const watch: Watch = { urls: [], consoleErrors: [], cspViolations: [] };

  beforeAll(async () => {
    signed = await signedIn('many@example.com', 'many', watch);
    for (let i = 0; i < TOKENS; i += 1) {
      const response = await fetch(`${signed.server.url}/api/tokens`, {
        method: 'POST',
        headers: { authorization: `Bearer ${signed.jwt}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `job ${i}` }),
      });
      if (response.status !== 201) throw new Error(`token ${i}: ${response.status}`);
    }
  });
  afterAll(async () => {
    await signed?.close();
  });

  it('shows every token, past the first page of the list', async () => {
    const { page } = signed;
    await page.reload();
    await page.getByRole('heading', { name: 'API tokens', level: 1 }).waitFor();
    const items = page.locator('ul.items > li.item');
    await expect.poll(() => items.count()).toBe(TOKENS);
    // Newest first, as the API lists them: the first token created is the last shown.
    expect(await items.first().innerText()).toContain(`job ${TOKENS - 1}`);
    expect(await items.last().innerText()).toContain('job 0');
    const pages = watch.urls.filter((url) => new URL(url).pathname === '/api/tokens');
    expect(pages.some((url) => new URL(url).searchParams.has('cursor'))).toBe(true);
  });

  it('counts every token in the account deletion confirmation', async () => {
    const { page } = signed;
    await page.goto(`${signed.server.url}/developers#account`);
    await page.getByLabel('Password', { exact: true }).fill('any password at all');
    await page.getByRole('button', { name: 'Delete account…' }).click();
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.isVisible()).toBe(true);
    expect(await dialog.innerText()).toContain(`${TOKENS} API tokens`);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
  });
});
