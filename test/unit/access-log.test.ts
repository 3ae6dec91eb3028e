import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Principal } from '../../src/auth/principal.js';
import { AccessLog, hundredths, MillisText, requestFields, urlField } from '../../src/http/logging.js';

describe('hundredths: the access log\'s "ms" field', () => {
  const reference = (ms: number) => String(Math.round(ms * 100) / 100);

  it('writes every whole number of hundredths up to 10 s exactly as JavaScript would', () => {
    const wrong: number[] = [];
    for (let n = 0; n <= 1_000_000; n++) if (hundredths(n / 100) !== reference(n / 100)) wrong.push(n / 100);
    expect(wrong).toEqual([]);
  });

  it('rounds like Math.round, across magnitudes and at the halves', () => {
    const samples = [0, 0.004, 0.005, 0.0049999, 0.015, 0.125, 0.999, 0.995, 1.005, 2.675, 9.995, 99.995, 12345.678, 2 ** 24 + 0.123];
    for (let i = 0; i < 20_000; i++) samples.push(Math.random() * 10 ** Math.floor(Math.random() * 9));
    expect(samples.filter((ms) => hundredths(ms) !== reference(ms))).toEqual([]);
  });

  it('falls back to JavaScript for what is not a small non-negative figure', () => {
    for (const ms of [-0.5, -3, 3e7, 1e300, Number.NaN, Number.POSITIVE_INFINITY]) expect(hundredths(ms)).toBe(reference(ms));
  });
});

describe('MillisText: the access log\'s "time" field', () => {
  it('writes each millisecond as String() does, across seconds, going forward and back', () => {
    const text = new MillisText();
    const start = Date.parse('2026-11-24T10:00:00.000Z');
    const wrong: number[] = [];
    // Every millisecond of three seconds, then each of them again in a scattered order.
    const order = Array.from({ length: 3000 }, (_, i) => start - 1000 + i);
    for (let i = 0; i < 3000; i++) order.push(start - 1000 + ((i * 7919) % 3000));
    for (const ms of order) if (text.of(ms) !== String(ms)) wrong.push(ms);
    expect(wrong).toEqual([]);
  });

  it('asked twice in a millisecond, or for the same second after another, still answers right', () => {
    const text = new MillisText();
    for (const ms of [1_700_000_000_005, 1_700_000_000_005, 1_700_000_001_000, 1_700_000_000_999, 1_700_000_000_000, 1_700_000_000_000]) {
      expect(text.of(ms)).toBe(String(ms));
    }
  });

  it('falls back to String() where the digits do not split into a second and three more', () => {
    const text = new MillisText();
    for (const ms of [0, 5, 999, 1000, 1001, 12_345, -1, -1500, 1.5, 1_700_000_000_000.25, 9e15, 2 ** 53 + 2, 1e21, Number.NaN]) expect(text.of(ms)).toBe(String(ms));
  });
});

describe('AccessLog lines', () => {
  const principal: Principal = {
    type: 'api_token',
    user: { id: 'user-1', username: 'ada', email: 'ada@example.com' },
    credentialId: 'token-1',
    scopes: [],
    expiresAt: null,
    app: null,
  };

  function collect(): { log: AccessLog; lines: () => Record<string, unknown>[] } {
    let written = '';
    const log = new AccessLog('info', { write: (chunk: string) => (written += chunk) });
    return { log, lines: () => written.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) };
  }

  it('writes each line with its own address, time and caller, past the address cache filling up', async () => {
    const { log, lines } = collect();
    const before = Date.now();
    const addresses = Array.from({ length: 2500 }, (_, i) => `10.0.${i >> 8}.${i & 255}`);
    addresses.forEach((remote, i) => log.line(`id-${i}`, requestFields('GET', urlField('/api/me'), 200), i / 1000, remote, i % 2 ? principal : null));
    log.line('odd', requestFields('GET', urlField('/x'), 401), 1.006, 'fe80::1%"eth0"', null);
    log.line('none', requestFields('GET', urlField('/x'), 401), 0, undefined, null);
    await new Promise((resolve) => setImmediate(resolve));
    const written = lines();
    expect(written).toHaveLength(addresses.length + 2);
    written.slice(0, addresses.length).forEach((line, i) => {
      expect(line).toMatchObject({ request_id: `id-${i}`, remote: addresses[i], ms: Math.round((i / 1000) * 100) / 100, url: '/api/me', status: 200 });
      if (i % 2) expect(line).toMatchObject({ auth: 'api_token', user_id: 'user-1', credential_id: 'token-1' });
      else expect(line).not.toHaveProperty('auth');
      expect(line.time).toBeGreaterThanOrEqual(before);
      expect(line.time).toBeLessThanOrEqual(Date.now());
    });
    expect(written.at(-2)).toMatchObject({ request_id: 'odd', remote: 'fe80::1%"eth0"', ms: 1.01 });
    expect(written.at(-1)).toMatchObject({ request_id: 'none', remote: null, ms: 0 });
  });

  describe('time', () => {
    afterEach(() => vi.useRealTimers());

    it('gives each line the millisecond it was written in, though lines of one millisecond share their start', async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      const { log, lines } = collect();
      const times = [1_795_000_000_000, 1_795_000_000_000, 1_795_000_000_001, 1_795_000_001_000, 1_795_000_000_999];
      times.forEach((time, i) => {
        vi.setSystemTime(time);
        log.line(`id-${i}`, requestFields('GET', urlField('/api/me'), 200), 0.5, '127.0.0.1', null);
      });
      await new Promise((resolve) => setImmediate(resolve));
      expect(lines().map((line) => [line.time, line.request_id])).toEqual(times.map((time, i) => [time, `id-${i}`]));
    });
  });

  it("follows its logger's level, as the logger changes it, and not its children's", () => {
    const log = new AccessLog('info', { write: () => undefined });
    const logger = pino({ level: 'warn' }, { write: () => undefined });
    log.follow(logger);
    expect(log.enabled()).toBe(false);
    logger.level = 'debug';
    expect(log.enabled()).toBe(true);
    const child = logger.child({ request_id: 'x' });
    child.level = 'silent';
    expect(log.enabled()).toBe(true);
    logger.level = 'error';
    expect(log.enabled()).toBe(false);
    logger.level = 'info';
    expect(log.enabled()).toBe(true);
  });
});
