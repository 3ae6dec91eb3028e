import { afterEach, describe, expect, it, vi } from 'vitest';
import { Periodic } from '../../src/lib/periodic.js';

function deferred() {
  let resolve = () => {};
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('Periodic', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs every interval, never two at once: the next run is scheduled when the last has finished', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let runs = 0;
    let release = deferred();
    const periodic = new Periodic(100, async () => {
      runs++;
      await release.promise;
    }, () => {});
    periodic.start();
    await vi.advanceTimersByTimeAsync(99);
    expect(runs).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs).toBe(1);
    // The first run is still going: however long, no second one starts beside it.
    await vi.advanceTimersByTimeAsync(1000);
    expect(runs).toBe(1);
    release.resolve();
    release = deferred();
    await vi.advanceTimersByTimeAsync(100);
    expect(runs).toBe(2);
    release.resolve();
    await periodic.stop();
  });

  it('reports a failing run and keeps the schedule', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const errors: unknown[] = [];
    let runs = 0;
    const periodic = new Periodic(10, async () => {
      runs++;
      throw new Error(`run ${runs} failed`);
    }, (error) => errors.push(error));
    periodic.start();
    await vi.advanceTimersByTimeAsync(30);
    expect(runs).toBe(3);
    expect(errors.map((e) => (e as Error).message)).toEqual(['run 1 failed', 'run 2 failed', 'run 3 failed']);
    await periodic.stop();
  });

  it('stop() waits for the run in progress, and nothing runs after it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let runs = 0;
    const release = deferred();
    const periodic = new Periodic(10, async () => {
      runs++;
      await release.promise;
    }, () => {});
    periodic.start();
    await vi.advanceTimersByTimeAsync(10);
    let stopped = false;
    const stopping = periodic.stop().then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(10);
    expect(stopped).toBe(false);
    release.resolve();
    await stopping;
    await vi.advanceTimersByTimeAsync(100);
    expect(runs).toBe(1);
  });
});
