import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { type Browser, type BrowserContext, type BrowserContextOptions, chromium, type Page } from 'playwright-core';
import { createApp } from '../../src/app.js';
import type { Clock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { createServices } from '../../src/composition-root.js';
import { PASSWORD } from '../helpers/api.js';
import { tempDir } from '../helpers/app.js';

/** Debian's chromium (`apt-get install chromium`); `npx playwright install` cannot run here. */
export const CHROMIUM = process.env.RZ_CHROMIUM ?? '/usr/bin/chromium';
export const SCREENSHOTS = join(import.meta.dirname, '..', '..', 'test-results', 'screenshots');

/**
 * Whether the browser tests can run. Without chromium they are skipped with a loud warning, or fail
 * when RZ_REQUIRE_BROWSER is set (CI sets it, so a missing browser never passes silently).
 */
export function browserAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  const message = `${CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium) to run the Developers page tests.`;
  if (process.env.RZ_REQUIRE_BROWSER) throw new Error(`RZ_REQUIRE_BROWSER is set but ${message}`);
  console.warn(`\n${'!'.repeat(100)}\n!!! BROWSER TESTS SKIPPED: ${message}\n${'!'.repeat(100)}\n`);
  return false;
}

export interface Served {
  readonly url: string;
  /** Every log line the server wrote (level info), to prove no credential reaches them. */
  readonly logs: string[];
  close(): Promise<void>;
}

/** The real app on a loopback port (`port`, else any free one) with a fresh SQLite file, its logs captured, sending webhooks. */
export async function serve(env: Record<string, string> = {}, clock?: Clock, port = 0): Promise<Served> {
  const temp = tempDir();
  const config = loadConfig({ DATABASE_URL: `sqlite:${join(temp.dir, 'rz.db')}`, LOG_LEVEL: 'info', RATE_LIMITS: 'off', ...env });
  const services = await createServices(config, clock ? { clock } : {});
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      logs.push(chunk.toString('utf8'));
      callback();
    },
  });
  const app = await createApp(services, { logStream });
  const url = await app.listen({ port, host: '127.0.0.1' });
  // As the server does (src/server.ts), so webhooks are sent; the maintenance sweeps stay off.
  services.background.start({ except: ['maintenance'] });
  return {
    url,
    logs,
    async close() {
      await app.close();
      await services.close();
      temp.remove();
    },
  };
}

/** Chromium, headless; `args` adds switches (e.g. `--host-resolver-rules` to reach the server by another name). */
export function launch(args: readonly string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', ...args],
  });
}

/** Everything a page did that the tests check afterwards. */
export interface Watch {
  readonly urls: string[];
  readonly consoleErrors: string[];
  readonly cspViolations: string[];
}

/** Failed API calls the tests provoke on purpose show in the console; nothing else may. */
const EXPECTED_CONSOLE = /^Failed to load resource: the server responded with a status of (400|401|404|409|429) /;

/** A browser context for `origin` that records requests, console errors and CSP violations. */
export async function openContext(browser: Browser, origin: string, watch: Watch, options: BrowserContextOptions = {}): Promise<BrowserContext> {
  const context = await browser.newContext({ locale: 'en-US', timezoneId: 'UTC', viewport: { width: 1200, height: 820 }, ...options });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  // Runs before the page's scripts; injected by the browser, so the page's CSP does not apply to it.
  await context.addInitScript(`document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));`);
  context.on('request', (request) => watch.urls.push(request.url()));
  context.on('console', (message) => {
    if (message.type() !== 'error') return;
    const text = message.text();
    if (text.startsWith('CSP violation')) watch.cspViolations.push(text);
    else if (!EXPECTED_CONSOLE.test(text)) watch.consoleErrors.push(text);
  });
  context.on('weberror', (error) => watch.consoleErrors.push(String(error.error())));
  return context;
}

const shots = new Map<string, number>();
/**
 * Saves a full-page screenshot under test-results/screenshots/<group>, numbered in the order taken.
 * Test files run in parallel, so each keeps its own group.
 */
export async function screenshot(page: Page, name: string, group = 'developers-page'): Promise<void> {
  const folder = join(SCREENSHOTS, group);
  const shot = (shots.get(group) ?? 0) + 1;
  // The group's first screenshot of a run clears the last run's, so the folder shows this run only.
  if (shot === 1) rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  shots.set(group, shot);
  await page.screenshot({ path: join(folder, `${String(shot).padStart(2, '0')}-${name}.png`), fullPage: true });
}

/** What has keyboard focus: its tag and accessible-ish name (aria-label, label, or text). */
export function focused(page: Page): Promise<{ tag: string; name: string; type: string }> {
  return page.evaluate(`(() => {
    const el = document.activeElement;
    if (!el) return { tag: '', name: '', type: '' };
    const label = el.getAttribute('aria-label') || (el.labels && el.labels[0] && el.labels[0].textContent) || el.textContent || '';
    return { tag: el.tagName.toLowerCase(), name: label.replace(/\\s+/g, ' ').trim(), type: el.getAttribute('type') || '' };
  })()`);
}

/**
 * Presses Tab until the focused element's name starts with `name` (and has tag `tag`), failing
 * after `max` presses: proves the control is reachable by keyboard, in a sensible order.
 */
export async function tabTo(page: Page, tag: string, name: string | RegExp, max = 20): Promise<void> {
  const seen: string[] = [];
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    const now = await focused(page);
    seen.push(`${now.tag}:${now.name}`);
    const matches = typeof name === 'string' ? now.name.startsWith(name) : name.test(now.name);
    if (now.tag === tag && matches) return;
  }
  throw new Error(`Tab never reached ${tag} "${String(name)}"; focus went through: ${seen.join(' | ')}`);
}

/** Signs a person up through the API (password PASSWORD); resolves with their user token. */
export async function signUp(url: string, email: string, username: string): Promise<string> {
  const response = await fetch(`${url}/api/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, username, password: PASSWORD }),
  });
  if (response.status !== 201) throw new Error(`signup answered ${response.status}`);
  return ((await response.json()) as { token: string }).token;
}

/** Logs in through the page's form at `screen` and waits for that screen's heading. */
export async function logIn(page: Page, url: string, email: string, screen: { fragment: string; heading: string } = { fragment: '', heading: 'API tokens' }): Promise<void> {
  await page.goto(`${url}/developers${screen.fragment}`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: screen.heading, level: 1 }).waitFor();
}

/** A fresh server, and a browser page where a person who signed up through the API has logged in. */
export interface SignedIn {
  readonly server: Served;
  readonly browser: Browser;
  readonly page: Page;
  /** The user token of the signup (not the page's own session). */
  readonly jwt: string;
  close(): Promise<void>;
}

/** Serves the app with `env`, signs `email` up, and logs in through the page, landing on API tokens. */
export async function signedIn(email: string, username: string, watch: Watch, env: Record<string, string> = {}): Promise<SignedIn> {
  const server = await serve(env);
  const jwt = await signUp(server.url, email, username);
  const browser = await launch();
  const page = await (await openContext(browser, server.url, watch)).newPage();
  await logIn(page, server.url, email);
  return {
    server,
    browser,
    page,
    jwt,
    async close() {
      await browser.close();
      await server.close();
    },
  };
}
