import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { VERSION } from '../version.js';
import { guardedLookup, isRefusedAddress, literalAddress, RefusedAddressError } from './addresses.js';
import { type Resolution, type Resolve, resolutionFor } from './resolution.js';

/** What an attempt got back: the status (null when there was none) or why it failed. */
export interface SendResult {
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly durationMs: number;
}

/** Sends one signed body to one URL. */
export type Send = (url: string, headers: Readonly<Record<string, string>>, body: string, signal: AbortSignal) => Promise<SendResult>;

/** How much of a response is read before the connection is dropped: only its status is kept. */
const MAX_RESPONSE_BYTES = 64 * 1024;

export const USER_AGENT = `rz-auth-webhooks/${VERSION}`;

export interface SenderOptions {
  /** The whole attempt (connect, send, status) must finish within this (WEBHOOK_TIMEOUT_SECONDS). */
  readonly timeoutMs: number;
  /**
   * The name's resolution and the TCP (and TLS) handshake must finish within this
   * (WEBHOOK_CONNECT_TIMEOUT_SECONDS): an address that never answers gives up its slot early.
   * The total timeout when absent or longer.
   */
  readonly connectTimeoutMs?: number;
  /** WEBHOOK_ALLOW_PRIVATE. */
  readonly allowPrivate: boolean;
  /** Injected in tests (in a lookup slot, like the system resolver); see resolutionFor. */
  readonly resolve?: Resolve;
  /** The DNS servers queried for public names (tests); those of /etc/resolv.conf by default. */
  readonly dnsServers?: readonly string[];
}

const UNRESOLVED_OR_REFUSED = 'refused: the host name does not resolve, or not only to public addresses';

/** A short, stable reason for a failed attempt, shown to the endpoint's owner: never a secret or a stack. */
function reasonOf(error: unknown, timedOut: Timeout | null, allowPrivate: boolean): string {
  if (timedOut) return timedOut.phase === 'connect' ? `could not connect within ${timedOut.ms / 1000} s` : `timed out after ${timedOut.ms / 1000} s`;
  // One reason for a name that does not resolve and one that resolves inward, as at registration:
  // two would tell the owner which internal names exist once they point their name at one.
  if (error instanceof RefusedAddressError) return UNRESOLVED_OR_REFUSED;
  const { code, syscall } = (error ?? {}) as NodeJS.ErrnoException;
  const unresolved = allowPrivate ? 'host name does not resolve' : UNRESOLVED_OR_REFUSED;
  // A DNS query that failed (c-ares: queryA, queryAaaa), whatever its code, is a name that does not resolve.
  if (syscall?.startsWith('query')) return unresolved;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'ENODATA':
    case 'EAI_AGAIN':
      return unresolved;
    case 'ECONNRESET':
      return 'connection reset';
    case 'ABORT_ERR':
      return 'aborted: the server is stopping';
    default:
      return typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? `connection failed (${code})` : 'connection failed';
  }
}

/** Which limit ended an attempt: connecting, or the whole attempt. */
interface Timeout {
  readonly phase: 'connect' | 'total';
  readonly ms: number;
}

/** One POST: resolves with the status once it arrives (the body is then read, up to a bound, and dropped). */
function post(target: URL, headers: Readonly<Record<string, string>>, body: string, signal: AbortSignal, options: SenderOptions, how: Resolution): Promise<SendResult> {
  const { timeoutMs, allowPrivate } = options;
  const connectMs = Math.min(options.connectTimeoutMs ?? timeoutMs, timeoutMs);
  return new Promise((resolve) => {
    const started = performance.now();
    let timedOut: Timeout | null = null;
    let settled = false;
    const lookup: LookupFunction = guardedLookup(allowPrivate, how, () => !settled && !timedOut && !signal.aborted);
    const finish = (statusCode: number | null, error: string | null) => {
      if (settled) return;
      settled = true;
      resolve({ statusCode, error, durationMs: Math.round(performance.now() - started) });
    };
    const client = target.protocol === 'https:' ? https : http;
    const request = client.request(target, {
      method: 'POST',
      headers: { ...headers, 'user-agent': USER_AGENT, 'content-length': String(Buffer.byteLength(body)) },
      lookup,
      agent: false,
      signal,
    });
    const giveUp = (phase: Timeout['phase'], ms: number) =>
      setTimeout(() => {
        timedOut = { phase, ms };
        request.destroy();
      }, ms);
    const timer = giveUp('total', timeoutMs);
    const connecting = connectMs < timeoutMs ? giveUp('connect', connectMs) : undefined;
    // With agent: false every request has a fresh socket, so "connected" is this attempt's own handshake.
    request.on('socket', (socket) => socket.once(target.protocol === 'https:' ? 'secureConnect' : 'connect', () => clearTimeout(connecting)));
    request.on('error', (error) => finish(null, reasonOf(error, timedOut, allowPrivate)));
    // A 101 answer: nothing here speaks the protocol offered, so it is a failed attempt.
    request.on('upgrade', (response, socket) => {
      socket.destroy();
      finish(response.statusCode ?? null, 'answered with a protocol switch');
    });
    // The timer keeps bounding a body still arriving after the status, until the connection closes.
    // Every way an attempt can end closes the request, so closing settles one nothing else did
    // (Node ends some answers, such as an unrequested 101, with neither an error nor a response).
    request.on('close', () => {
      clearTimeout(timer);
      clearTimeout(connecting);
      finish(null, timedOut ? reasonOf(null, timedOut, allowPrivate) : 'connection closed without an answer');
    });
    request.on('response', (response) => {
      finish(response.statusCode ?? null, null);
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_RESPONSE_BYTES) response.destroy();
      });
      response.on('error', () => {});
    });
    request.end(body);
  });
}

/**
 * The webhook sender: node:http/https, no redirects followed (a 3xx is a failed attempt), no
 * keep-alive pool shared between endpoints, the response read up to 64 KiB and dropped. Outside
 * WEBHOOK_ALLOW_PRIVATE, an IP literal is checked before connecting and a host name at connect
 * time, on every address it resolves to, so a name that passed registration cannot be turned
 * toward the internal network later (DNS rebinding).
 */
export function createSender(options: SenderOptions): Send {
  const how = resolutionFor(options.allowPrivate, options.resolve, options.dnsServers);
  return async (url, headers, body, signal) => {
    const target = new URL(url);
    const literal = literalAddress(target);
    // Node calls `lookup` for names only: an address written in the URL is checked here.
    if (literal !== null && !options.allowPrivate && isRefusedAddress(literal)) return { statusCode: null, error: 'refused: a private or reserved address', durationMs: 0 };
    return post(target, headers, body, signal, options, how);
  };
}
