import { channel } from 'node:diagnostics_channel';

/** What is used of `@opentelemetry/api`, an optional peer dependency. */
interface OpenTelemetryApi {
  readonly context: { active(): unknown };
  readonly propagation: { inject(context: unknown, carrier: Record<string, string>): void };
}

/** A variable, so that no bundler or compiler insists on the package: it is optional. */
const API = '@opentelemetry/api';
let api: Promise<OpenTelemetryApi | null> | undefined;
const loadApi = (): Promise<OpenTelemetryApi | null> => (api ??= import(API).then((m: OpenTelemetryApi) => m, () => null));

/** Where Node's fetch announces each request: an OpenTelemetry instrumentation of fetch listens here. */
const FETCH_REQUESTS = channel('undici:request:create');

/**
 * The headers that carry the service's active trace to rz-auth (W3C `traceparent`, and whatever
 * else its propagator sends), so that rz-auth's span of an introspection shows under the service's
 * span. Nothing when the service has no `@opentelemetry/api` (or no SDK: the API then injects
 * nothing), and nothing when an instrumentation of fetch is listening: it adds the headers of its
 * own client span, and a second `traceparent` would make rz-auth read neither.
 */
export async function traceHeaders(): Promise<Record<string, string>> {
  if (FETCH_REQUESTS.hasSubscribers) return {};
  const otel = await loadApi();
  const carrier: Record<string, string> = {};
  otel?.propagation.inject(otel.context.active(), carrier);
  return carrier;
}
