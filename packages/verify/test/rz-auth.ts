import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { scopesFileEnv } from '../../../test/helpers/scopes.js';
import { request, runCli, type ServerProcess, spawnServer } from '../../../test/helpers/server-process.js';
import { createVerifier, type Verifier, type VerifierOptions, VerifyError } from '../src/index.js';

/** rz-auth as a real process (dist/cli.js serve) on a temporary SQLite file, declaring the test scopes. */
export interface RzAuth {
  readonly server: ServerProcess;
  readonly url: string;
  /** The environment it runs with, for the CLI on the same database. */
  readonly env: Record<string, string>;
  readonly dir: string;
  stop(): Promise<void>;
}

export async function startRzAuth(extra: Record<string, string> = {}): Promise<RzAuth> {
  const dir = mkdtempSync(join(tmpdir(), 'rz-verify-'));
  const env = { DATABASE_URL: `sqlite:${join(dir, 'rz.db')}`, RATE_LIMITS: 'off', ...scopesFileEnv(dir), ...extra };
  const server = await spawnServer(env, 30_000);
  return {
    server,
    url: server.url,
    env,
    dir,
    async stop() {
      await server.stop('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A service credential from the CLI, as the operator makes one. */
export async function serviceToken(env: Record<string, string>, name = 'games'): Promise<string> {
  const created = await runCli(['services', 'create', name], env);
  expect(created.code, created.stderr).toBe(0);
  return (JSON.parse(created.stdout) as { token: string }).token;
}

/** Requests the verifier makes to rz-auth, by path, through the real fetch. */
export interface Counted {
  readonly fetch: typeof globalThis.fetch;
  count(path: string): number;
}

export function countingFetch(): Counted {
  const paths: string[] = [];
  return {
    fetch: (input, init) => {
      paths.push(new URL(input instanceof Request ? input.url : String(input)).pathname);
      return globalThis.fetch(input, init);
    },
    count: (path) => paths.filter((p) => p === path).length,
  };
}

/** A verifier of `rz`, its requests counted; resolves once its event stream is up. */
export async function verifierOf(rz: { url: string }, token: string, options: Partial<VerifierOptions> = {}): Promise<{ verifier: Verifier; counted: Counted }> {
  const counted = countingFetch();
  const verifier = createVerifier({ url: rz.url, serviceToken: token, fetch: counted.fetch, ...options });
  await until(() => verifier.streaming, 'the event stream is up');
  return { verifier, counted };
}

/** Polls `condition` every 5 ms until it holds; fails after `timeoutMs`. */
export async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export const PASSWORD = 'correct horse battery staple';

export interface Account {
  readonly jwt: string;
  readonly userId: string;
  readonly username: string;
  readonly email: string;
}

/** A new user, signed up over HTTP. */
export async function signup(url: string): Promise<Account> {
  const tag = Math.random().toString(36).slice(2, 10);
  const email = `v-${tag}@example.com`;
  const res = await request(url, 'POST', '/api/auth/signup', { body: { email, username: `v_${tag}`, password: PASSWORD } });
  expect(res.status).toBe(201);
  const body = res.body as { token: string; user: { id: string } };
  return { jwt: body.token, userId: body.user.id, username: `v_${tag}`, email };
}

/** A fresh JWT of `account` (a new session). */
export async function login(url: string, account: Account): Promise<string> {
  const res = await request(url, 'POST', '/api/auth/login', { body: { email: account.email, password: PASSWORD } });
  expect(res.status).toBe(200);
  return (res.body as { token: string }).token;
}

/** An API token of `account` with `scopes`, limited to `networks` when given. */
export async function apiToken(url: string, account: Account, scopes: string[] = [], networks?: string[]): Promise<{ id: string; token: string }> {
  const body = { name: 'verify', scopes, ...(networks ? { allowed_cidrs: networks } : {}) };
  const res = await request(url, 'POST', '/api/tokens', { token: account.jwt, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; token: string };
}

/** An app of `account` with `scopes`, and its app token. */
export async function appToken(url: string, account: Account, scopes: string[] = []): Promise<{ appId: string; tokenId: string; token: string }> {
  const res = await request(url, 'POST', '/api/apps', { token: account.jwt, body: { name: 'Verify app', scopes } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const body = res.body as { id: string; token_id: string; token: string };
  return { appId: body.id, tokenId: body.token_id, token: body.token };
}

/**
 * Calls verify() with `token` every 5 ms until it is refused, and returns the refusal; fails after
 * `timeoutMs`. For a change that reaches the verifier through its event stream.
 */
export async function refusedSoon(verifier: Verifier, token: string, timeoutMs = 10_000): Promise<VerifyError> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const error = await verifier.verify(`Bearer ${token}`).then(
      () => null,
      (e: unknown) => e,
    );
    if (error !== null) {
      expect(error).toBeInstanceOf(VerifyError);
      return error as VerifyError;
    }
    if (Date.now() > deadline) throw new Error(`still accepted after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** One rz-auth for the enclosing block, with a service credential and an account; verifiers pushed to `verifiers` are closed after each test. */
export interface Shared {
  readonly rz: RzAuth;
  readonly service: string;
  readonly account: Account;
  readonly verifiers: Verifier[];
}

export function sharedRzAuth(): Shared {
  const shared = { verifiers: [] as Verifier[] } as { rz: RzAuth; service: string; account: Account; verifiers: Verifier[] };
  beforeAll(async () => {
    shared.rz = await startRzAuth();
    shared.service = await serviceToken(shared.rz.env);
    shared.account = await signup(shared.rz.url);
  }, 60_000);
  afterEach(async () => {
    for (const v of shared.verifiers.splice(0)) await v.close();
  });
  afterAll(() => shared.rz.stop());
  return shared;
}
