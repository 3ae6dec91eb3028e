import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const base = { DATABASE_URL: 'sqlite:./x.db' };

describe('device flow configuration (contract §13.2)', () => {
  it('on with PUBLIC_URL, at the documented defaults', () => {
    const { device } = loadConfig({ ...base, PUBLIC_URL: 'https://auth.example.com' });
    expect(device).toMatchObject({ enabled: true, codeTtlS: 900, pollIntervalS: 5, tokenMaxDays: 90, maxPendingPerAddress: 10 });
    expect(device.publicUrl?.toString()).toBe('https://auth.example.com/');
  });

  it('without PUBLIC_URL: on at the listening address on a loopback HOST (npm start, then rz login), else off', () => {
    expect(loadConfig(base).device).toMatchObject({ enabled: true, publicUrl: new URL('http://127.0.0.1:3000/') });
    expect(loadConfig({ ...base, HOST: '::1', PORT: '8080' }).device.publicUrl?.toString()).toBe('http://[::1]:8080/');
    expect(loadConfig({ ...base, HOST: 'localhost' }).device.publicUrl?.toString()).toBe('http://localhost:3000/');
    // PORT=0 listens on whatever port is free: no address to name in advance.
    expect(loadConfig({ ...base, PORT: '0' }).device.enabled).toBe(false);
    expect(loadConfig({ ...base, HOST: '0.0.0.0' }).device.enabled).toBe(false);
    expect(() => loadConfig({ ...base, HOST: '0.0.0.0', DEVICE_FLOW_ENABLED: 'true' })).toThrow(ConfigError);
    expect(loadConfig({ ...base, PUBLIC_URL: 'https://auth.example.com', DEVICE_FLOW_ENABLED: 'false' }).device.enabled).toBe(false);
  });

  it.each([
    ['DEVICE_CODE_TTL_S', '299'],
    ['DEVICE_CODE_TTL_S', '1801'],
    ['DEVICE_POLL_INTERVAL_S', '4'],
    ['DEVICE_POLL_INTERVAL_S', '31'],
    ['DEVICE_TOKEN_MAX_DAYS', '0'],
    ['DEVICE_MAX_PENDING_PER_IP', '0'],
  ])('%s=%s is refused', (name, value) => {
    expect(() => loadConfig({ ...base, PUBLIC_URL: 'https://auth.example.com', [name]: value })).toThrow(name);
  });
});
