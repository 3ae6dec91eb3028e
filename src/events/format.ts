import type { ChangeEvent } from '../changes/events.js';

/*
 * The wire format of GET /api/events (text/event-stream, WHATWG HTML §9.2). Every line is ours:
 * ids are numbers, event types are fixed names, and data is JSON of ids and scope names, which
 * JSON.stringify keeps on one line.
 */

/** How long a client waits before reconnecting (EventSource's `retry`). */
export const RETRY_MS = 1000;

/**
 * What every stream starts with (it also sends the headers at once): the reconnection delay and,
 * for a stream that starts from now, the id it starts after, so a client can resume from it even
 * if no event came before it lost the connection.
 */
export const opening = (startsAfter: number | null): string => `retry: ${RETRY_MS}\n${startsAfter === null ? '' : `id: ${startsAfter}\n`}\n`;

/**
 * One event. `committed_at` (milliseconds since the epoch, absent for changes recorded by an older
 * version) is when the change was committed, for a client that measures how long it took to reach
 * it (docs/revocation-metrics.md). A field of its own, before `data`, so that `data` keeps the
 * documented shapes: EventSource ignores a field it does not know (WHATWG HTML §9.2.6).
 */
export const formatEvent = (id: number, event: ChangeEvent, committedAt?: number): string =>
  `id: ${id}\nevent: ${event.type}\n${committedAt === undefined ? '' : `committed_at: ${committedAt}\n`}data: ${JSON.stringify(event.data)}\n\n`;

/** Drop every cache: what happened up to `id` cannot be told event by event. */
export const formatReset = (id: number): string => `id: ${id}\nevent: reset\ndata: {}\n\n`;

/**
 * The response header that states the heartbeat's interval in milliseconds: a client that hears
 * nothing for longer (plus a margin) knows the connection is stalled, not quiet, and stops trusting
 * what the stream was keeping correct. A header, so that the stream's own lines stay as they were.
 */
export const HEARTBEAT_HEADER = 'rz-heartbeat-ms';

/** A comment line: keeps proxies from closing a quiet stream. */
export const HEARTBEAT = ': keep-alive\n\n';
