import type { Registry } from 'prom-client';
import { AuthDecisions, IntrospectionMetrics } from './auth.js';
import { HttpMetrics } from './http.js';
import { type MfaVerificationCount, mfaVerificationCount } from './mfa.js';
import { type DeliveryCount, deliveryCount, type HashTiming, hashTiming, mailDeliveryCount } from './queues.js';
import { type RejectionCount, rejectionCount } from './ratelimit.js';
import { type EventCount, eventCount } from './state.js';
import { type TokenCounts, tokenCounts } from './tokens.js';

/** The series counted on the way (requests, decisions, tokens...), one set per registry. */
export interface Series {
  readonly http: HttpMetrics;
  readonly decisions: AuthDecisions;
  readonly introspections: IntrospectionMetrics;
  readonly tokens: TokenCounts;
  readonly rejections: RejectionCount;
  readonly hashes: HashTiming;
  readonly deliveries: DeliveryCount;
  readonly mails: DeliveryCount;
  readonly events: EventCount;
  readonly mfa: MfaVerificationCount;
}

const made = new WeakMap<Registry, Series>();

/**
 * The series of a registry, made on first use: the composition root hands them to the services,
 * and the app to its hooks, from the one registry of the process (a metric name registers once).
 */
export function seriesOf(registry: Registry): Series {
  let series = made.get(registry);
  if (!series) {
    series = {
      http: new HttpMetrics(registry),
      decisions: new AuthDecisions(registry),
      introspections: new IntrospectionMetrics(registry),
      tokens: tokenCounts(registry),
      rejections: rejectionCount(registry),
      hashes: hashTiming(registry),
      deliveries: deliveryCount(registry),
      mails: mailDeliveryCount(registry),
      events: eventCount(registry),
      mfa: mfaVerificationCount(registry),
    };
    made.set(registry, series);
  }
  return series;
}
