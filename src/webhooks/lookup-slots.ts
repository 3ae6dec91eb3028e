/**
 * Lookups through the system resolver that may run at once (with WEBHOOK_ALLOW_PRIVATE; public
 * names are DNS queries, which need no slot: resolution.ts). dns.lookup runs getaddrinfo on libuv's
 * thread pool, which argon2 shares (every login), and a lookup cannot be cancelled: a timeout only
 * stops waiting for it. Without a cap, names whose DNS server never answers could hold every
 * thread of the pool and stall logins; `serve` gives the pool one thread per slot besides the
 * hashing ones (cli.ts). A slot is freed when the lookup really ends.
 */
export const MAX_LOOKUPS = 2;

let running = 0;
/** Each waiter starts its lookup, or settles at once if its caller has given up meanwhile. */
const waiting: Array<() => void> = [];

function startWaiting(): void {
  while (running < MAX_LOOKUPS && waiting.length > 0) waiting.shift()?.();
}

/** Runs `lookup` in a slot once one is free; if `wanted()` is false by then, it is skipped (rejects). */
export function inLookupSlot<T>(lookup: () => Promise<T>, wanted: () => boolean = () => true): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    waiting.push(() => {
      if (!wanted()) return reject(new Error('lookup abandoned'));
      running += 1;
      lookup()
        .then(resolve, reject)
        .finally(() => {
          running -= 1;
          startWaiting();
        });
    });
    startWaiting();
  });
}

/** Lookups running now (tests). */
export const lookupsRunning = (): number => running;
