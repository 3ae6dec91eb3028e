import type { ChangeSource } from './sources.js';

/** How often the source is asked while the feed is watched. */
export const WATCH_INTERVAL_MS = 20;

interface Feed {
  poll(): Promise<void>;
  sync(): Promise<void> | undefined;
}

/**
 * Reads the log soon after another process records a change, until the returned function is
 * called. The source is asked every {@link WATCH_INTERVAL_MS} (on SQLite `data_version`, which costs
 * no I/O; on Redis one MGET, which also notices Redis losing its data); a source that can push
 * (Redis) also wakes the feed the moment a change is announced: one read at a time, and one more
 * if any announcement arrived during it, so a burst of announcements costs two reads, not one each.
 */
export function watchSource(feed: Feed, source: ChangeSource, onError: (error: unknown) => void): () => void {
  const timer = setInterval(() => void feed.sync(), WATCH_INTERVAL_MS);
  timer.unref();
  if (!source.listen) return () => clearInterval(timer);
  let reading = false;
  let again = false;
  const wake = (): void => {
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    // poll() reports its own failures and never rejects.
    void feed.poll().finally(() => {
      reading = false;
      if (again) {
        again = false;
        wake();
      }
    });
  };
  const unlisten = source.listen(wake, onError);
  return () => {
    clearInterval(timer);
    unlisten();
  };
}

interface Loop {
  start(): void;
  stop(): Promise<void>;
}

/**
 * The log's poll, with the feed watched while it runs: each change is then applied when it is
 * announced, not at the next request or poll, so that the propagation metrics measure how soon this
 * instance would refuse a revoked credential, not how long it sat idle (docs/revocation-metrics.md).
 */
export function pollingWatched(polling: Loop, feed: { watch(): () => void }): Loop {
  let unwatch: (() => void) | undefined;
  return {
    start() {
      polling.start();
      unwatch ??= feed.watch();
    },
    async stop() {
      unwatch?.();
      unwatch = undefined;
      await polling.stop();
    },
  };
}
