import type { Delivery, WebhookEndpoint } from './store.js';

/** An endpoint as the API and the CLI show it: never its secret. */
export const endpointJson = (e: WebhookEndpoint) => ({
  id: e.id,
  url: e.url,
  description: e.description,
  event_types: [...e.eventTypes],
  created_at: e.createdAt,
  // Only while the breaker is open, so an endpoint delivering normally reads as it always did.
  ...(e.paused ? { paused: { consecutive_failures: e.paused.consecutiveFailures, next_probe_at: e.paused.until } } : {}),
});

/** A delivery with its attempts, as the API and the CLI show it. */
export const deliveryJson = (d: Delivery) => ({
  id: d.id,
  event_id: d.eventId,
  event_type: d.eventType,
  status: d.status,
  created_at: d.createdAt,
  next_attempt_at: d.nextAttemptAt,
  finished_at: d.finishedAt,
  attempts: d.attempts.map((a) => ({ attempted_at: a.attemptedAt, status_code: a.statusCode, error: a.error, duration_ms: a.durationMs })),
});
