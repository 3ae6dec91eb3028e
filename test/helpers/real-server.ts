import { connect } from 'node:net';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import type { Tracing } from '../../src/observability/tracing/tracing.js';
import { type TestApp, tempDir } from './app.js';

/** A {@link TestApp} backed by the real server on a random loopback port (logs are silent). */
export interface RealServer extends TestApp {
  readonly port: number;
  readonly url: string;
}

/**
 * Starts the real server, for what inject() cannot send: repeated headers, raw bytes, header sizes
 * that only Node's HTTP parser enforces. Setup can still go through `inject`.
 */
export async function startRealServer(env: Record<string, string> = {}, tracing?: Tracing): Promise<RealServer> {
  const temp = tempDir();
  // Rate limits off, as in startTestApp: these tests are about other things.
  const config = loadConfig({ PORT: '0', DATABASE_URL: `sqlite:${join(temp.dir, 'rz.db')}`, LOG_LEVEL: 'silent', RATE_LIMITS: 'off', MAIL_WORKER: 'inline', ...env });
  const server = await startServer(config, tracing);
  return {
    app: server.app,
    services: server.services,
    config,
    dir: temp.dir,
    logs: [],
    settledLogs: async () => [],
    port: Number(new URL(server.url).port),
    url: server.url,
    inject: (request) => server.app.inject(request),
    async close() {
      await server.close();
      temp.remove();
    },
  };
}

export interface RawResponse {
  readonly status: number;
  /** Lower-cased names; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * Sends `head` (request line and headers, without the blank line) byte for byte over a fresh
 * connection with `Connection: close`, then `body` if any (`head` gives its framing), and reads the
 * whole response (the server closes). With `halfClose`, the socket's sending side is closed after
 * the request.
 */
export function rawRequest(port: number, head: string, body = '', halfClose = false): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const request = `${head}\r\nConnection: close\r\n\r\n${body}`;
    const socket = connect(port, '127.0.0.1', () => (halfClose ? socket.end(request) : socket.write(request)));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // A server that refuses a request may reset the connection after answering: keep what arrived.
    socket.on('error', (error) => (chunks.length === 0 ? reject(error) : undefined));
    socket.on('close', () => {
      if (chunks.length > 0) resolve(parseResponse(Buffer.concat(chunks).toString('latin1')));
      else reject(new Error('the connection closed without an answer'));
    });
  });
}

function parseResponse(text: string): RawResponse {
  const split = text.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = text.slice(0, split).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: text.slice(split + 4) };
}
