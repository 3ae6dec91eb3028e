import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { browserAvailable, launch, serve, type Served } from './harness.js';

/*
 * The API reference (/docs) in a real browser, reached as a deployment reaches it: over plain HTTP
 * by a name that is not loopback (a LAN address, a name inside a container network).
 */

const run = browserAvailable();

describe.skipIf(!run)('the API reference page', { timeout: 60_000 }, () => {
  let server: Served;
  let browser: Browser;

  beforeAll(async () => {
    server = await serve();
    browser = await launch([`--host-resolver-rules=MAP rz.test ${new URL(server.url).host}`]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('over plain HTTP by a name other than loopback it was blank (its CSP upgraded its scripts to HTTPS): now it lists the operations', async () => {
    const page = await browser.newPage();
    const failed: string[] = [];
    page.on('requestfailed', (request) => failed.push(request.url()));
    await page.goto('http://rz.test/docs');
    await page.waitForSelector('.opblock', { timeout: 15_000 });
    expect(await page.locator('.opblock').count()).toBeGreaterThan(20);
    expect(failed).toEqual([]);
    await page.close();
  });

  it('with a query string in its address it was blank (it asked for /docs?x/json): now it lists the operations', async () => {
    const page = await browser.newPage();
    await page.goto('http://rz.test/docs?x=1#/');
    await page.waitForSelector('.opblock', { timeout: 15_000 });
    expect(new URL(page.url()).pathname).toBe('/docs/');
    await page.close();
  });
});
