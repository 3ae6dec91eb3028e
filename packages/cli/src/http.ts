import type { Deps } from './deps.js';
import { networkError } from './errors.js';
import { redact, redactHeaders } from './redact.js';
import { userAgent } from './version.js';

/** Longest answer read from the server: every answer the CLI expects is a small JSON object. */
const MAX_BODY = 1 << 20;
const TIMEOUT_MS = 30_000;

export interface Reply {
  status: number;
  /** The parsed JSON object, or an empty object when the body was not one. */
  body: Record<string, unknown>;
}

export interface Request {
  method: 'GET' | 'POST';
  url: string;
  token?: string;
  form?: Record<string, string>;
}

export interface Http {
  send(request: Request, signal?: AbortSignal): Promise<Reply>;
}

/**
 * The one way the CLI talks to rz-auth: a User-Agent, no redirects (a redirect could carry the
 * Authorization header to another origin), a timeout, a size cap, and --debug lines that never
 * show a token (contract §13.8). Any failure to get an answer is a network error (exit 4).
 */
export function createHttp(deps: Deps, debug: boolean): Http {
  const log = (line: string) => { if (debug) deps.stderr(`debug: ${redact(line)}\n`); };
  return {
    async send(request, signal) {
      const headers = new Headers({ 'user-agent': userAgent(deps.platform), accept: 'application/json' });
      if (request.token !== undefined) headers.set('authorization', `Bearer ${request.token}`);
      let body: string | undefined;
      if (request.form !== undefined) {
        headers.set('content-type', 'application/x-www-form-urlencoded');
        body = new URLSearchParams(request.form).toString();
      }
      log(`> ${request.method} ${request.url}`);
      for (const line of redactHeaders(headers)) log(`> ${line}`);
      if (body !== undefined) log(`> ${body}`);
      const timeout = AbortSignal.timeout(TIMEOUT_MS);
      let text: string;
      let status: number;
      try {
        const response = await deps.fetch(request.url, {
          method: request.method, headers, body, redirect: 'error',
          signal: signal === undefined ? timeout : AbortSignal.any([signal, timeout]),
        });
        status = response.status;
        log(`< ${status}`);
        for (const line of redactHeaders(response.headers)) log(`< ${line}`);
        text = await response.text();
      } catch (err) {
        if (signal?.aborted === true) throw signal.reason;
        throw networkError(`Could not reach ${new URL(request.url).origin}: ${causeOf(err)}`);
      }
      if (text.length > MAX_BODY) throw networkError(`The answer from ${new URL(request.url).origin} is too large`);
      log(`< ${text}`);
      return { status, body: parseObject(text) };
    },
  };
}

function parseObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function causeOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause;
  return cause instanceof Error ? cause.message : err.message;
}
