import { describe, expect, it } from 'vitest';
import { Background, type BackgroundLoops, type Loop } from '../../src/background.js';

function recordingLoops(): { loops: BackgroundLoops; log: string[] } {
  const log: string[] = [];
  const loop = (name: string): Loop => ({
    start: () => void log.push(`start ${name}`),
    stop: async () => void log.push(`stop ${name}`),
  });
  const loops = {
    changePolling: loop('changePolling'),
    tokenUsage: loop('tokenUsage'),
    sessionUsage: loop('sessionUsage'),
    refusals: loop('refusals'),
    maintenance: loop('maintenance'),
    webhookDelivery: loop('webhookDelivery'),
    mailDelivery: loop('mailDelivery'),
  };
  return { loops, log };
}

describe('Background', () => {
  it('starts every loop but the ones left out, and stops them all, the write-behinds last', async () => {
    const { loops, log } = recordingLoops();
    const background = new Background(loops);
    background.start({ except: ['maintenance', 'webhookDelivery', 'mailDelivery'] });
    expect(log.filter((l) => l.startsWith('start')).sort()).toEqual(['start changePolling', 'start refusals', 'start sessionUsage', 'start tokenUsage']);
    log.length = 0;
    await background.stop();
    expect(log).toEqual(['stop maintenance', 'stop webhookDelivery', 'stop mailDelivery', 'stop changePolling', 'stop tokenUsage', 'stop sessionUsage', 'stop refusals']);
  });

  it('starts all seven by default, as the server does', () => {
    const { loops, log } = recordingLoops();
    new Background(loops).start();
    expect(log).toHaveLength(7);
  });
});
