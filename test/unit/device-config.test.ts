import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const base = { DATABASE_URL: 'sqlite:./x.db' };

describe('device flow configuration (contract §13.2)', () => {
  it('on with PUBLIC_URL, at the documented defaults', () => {
    const { device } = loadConfig({ ...base, PUBLIC_URL: 'https://auth.example.com' });
    expect(device).toMatchObject({ enabled: true, codeTtlS: 900, pollIntervalS: 5, tokenMaxDays: 90, maxPendingPerAddress: 10 });
    expect(device.publicUrl?.toString()).toBe('https://auth.example.com/');
  });

  it('off without PUBLIC_URL; DEVICE_FLOW_ENABLED=true without it refuses to start', () => {
    expect(loadConfig(base).device.enabled).toBe(false);
    expect(() => loadConfig({ ...base, DEVICE_FLOW_ENABLED: 'true' })).toThrow(ConfigError);
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
