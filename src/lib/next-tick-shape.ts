import { createHook } from 'node:async_hooks';

/*
 * Keeps `process.nextTick` fast for the life of the process (Node 20 and 24 alike).
 *
 * Node calls `process.nextTick` about eight times per HTTP request. Each call builds a tick object
 * with an object literal whose first two keys are computed (`{ [async_id_symbol]: …,
 * [trigger_async_id_symbol]: …, callback, args }`). V8 records the hidden class (map) each computed
 * key is added to, and holds those maps weakly. Tick objects live for one turn of the event loop, so
 * when the process idles through a few full garbage collections (as a server does at start-up,
 * after migrations and loading its password blocklist), nothing holds the maps any more, the
 * collector frees them, and the next call builds new ones. V8 reads the different map as a second
 * shape and turns those property definitions megamorphic for good: a runtime call each, about
 * 250-450 ns per `nextTick` instead of 35-70 ns (measured in the server and in a script that only
 * forces the collections; README, "Performance").
 *
 * Holding one real tick object keeps its map, and through its back pointers the maps of the
 * earlier keys, alive, so the literal stays monomorphic. The object is captured once through an
 * `init` hook that is enabled around a single `nextTick` call and disabled right after: no hook
 * stays installed. This module must be evaluated before the rest of the server is loaded (first
 * import of the CLI).
 */

let tickObject: object | undefined;
const hook = createHook({
  init(_asyncId, type, _triggerAsyncId, resource) {
    if (type === 'TickObject') tickObject = resource;
  },
});
hook.enable();
process.nextTick(() => {});
hook.disable();

/** The tick object held for its shape (exported: reachable for the life of the process). */
export const heldTickObject: object | undefined = tickObject;
