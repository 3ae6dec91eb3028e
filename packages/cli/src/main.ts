#!/usr/bin/env node
import { homedir, hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { openWithOs } from './browser.js';
import { run } from './cli.js';
import { loadNapiKeychain } from './keychain.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    // A token is a few dozen bytes; a stream of more is not a token.
    if (size > 65_536) break;
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const interrupt = new AbortController();
// Ctrl-C ends a waiting login through the same path as any failure: nothing half-written.
process.once('SIGINT', () => interrupt.abort(new Error('interrupted')));

const code = await run(process.argv.slice(2), {
  env: process.env,
  platform: process.platform,
  homedir: homedir(),
  hostname: hostname(),
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  readStdin,
  fetch: globalThis.fetch,
  loadKeychain: loadNapiKeychain,
  openBrowser: (url) => openWithOs(url),
  now: () => Date.now(),
  sleep: (ms, signal) => delay(ms, undefined, { signal }),
  signal: interrupt.signal,
});
process.exitCode = code;
