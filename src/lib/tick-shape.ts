import { executionAsyncResource } from 'node:async_hooks';

let held: object | undefined;

/**
 * Keeps one of Node's own `process.nextTick` records alive for the life of the process.
 *
 * Node's request and stream teardown queues several ticks per request. V8 remembers, at the spot
 * in Node that builds each record, the object shapes it saw there; only live records keep those
 * shapes, and start-up runs full garbage collections while none is alive. Each collection that
 * frees them makes the next records new shapes, and after a few that spot falls back to V8's
 * generic, slow path for the rest of the process, which every request then pays for (see
 * bench/README.md). One record held keeps its shapes, so the spot stays fast. Call it first thing.
 */
export function holdTickShape(): void {
  if (held === undefined) process.nextTick(() => (held = executionAsyncResource()));
}
