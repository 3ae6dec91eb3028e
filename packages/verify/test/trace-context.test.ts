import { channel } from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trace } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startOtlpSink } from '../../../test/helpers/otlp-sink.js';
import { traceHeaders } from '../src/trace-context.js';
import { apiToken, type RzAuth, serviceToken, signup, startRzAuth, verifierOf } from './rz-auth.js';

/**
 * A platform service that runs the OpenTelemetry SDK (without a fetch instrumentation) and checks
 * a token with @rz-auth/verify: rz-auth's span of the introspection is a child of the service's.
 */
describe('trace context on introspection calls', () => {
  const exporter = new InMemorySpanExporter();
  const sdk = new NodeSDK({ spanProcessors: [new SimpleSpanProcessor(exporter)], instrumentations: [], metricReaders: [], logRecordProcessors: [] });
  let rz: RzAuth;
  let sink: Awaited<ReturnType<typeof startOtlpSink>>;

  beforeAll(async () => {
    sdk.start();
    sink = await startOtlpSink();
    // rz-auth's default sampler (parentbased_traceidratio, 0.01): the service's sampled flag decides.
    rz = await startRzAuth({ OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '50' });
  }, 60_000);
  afterAll(async () => {
    await rz?.stop();
    await sink?.close();
    await sdk.shutdown();
  });

  it("rz-auth's introspection server span has the service's span as its parent", async () => {
    const { verifier } = await verifierOf(rz, await serviceToken(rz.env));
    const { token } = await apiToken(rz.url, await signup(rz.url));
    const service = trace.getTracer('platform-service');
    const caller = await service.startActiveSpan('GET /scores', async (span) => {
      try {
        return await verifier.verify(`Bearer ${token}`);
      } finally {
        span.end();
      }
    });
    await verifier.close();
    expect(caller.tokenType).toBe('api_token');
    // Both SDKs export in the background: wait for the service's span and for rz-auth's.
    const exported = () => exporter.getFinishedSpans().some((s) => s.name === 'GET /scores') && sink.spans.some((s) => s.name === 'POST /api/introspect');
    for (let i = 0; i < 200 && !exported(); i++) await new Promise((r) => setTimeout(r, 50));
    const { traceId, spanId } = exporter.getFinishedSpans().find((s) => s.name === 'GET /scores')?.spanContext() ?? {};
    expect(traceId).toBeDefined();
    const introspection = sink.spans.find((s) => s.name === 'POST /api/introspect');
    expect(introspection).toMatchObject({ traceId, parentSpanId: spanId, kind: 2 });
    expect(introspection?.attributes).toMatchObject({ 'rz.auth.token_type': 'service', 'rz.auth.outcome': 'ok' });
  });

  it('adds nothing outside a span, and nothing when an instrumentation of fetch propagates on its own', async () => {
    expect(await traceHeaders()).toEqual({});
    const inside = await trace.getTracer('t').startActiveSpan('work', async (span) => {
      const headers = await traceHeaders();
      const onChannel = () => {};
      channel('undici:request:create').subscribe(onChannel);
      const whenInstrumented = await traceHeaders();
      channel('undici:request:create').unsubscribe(onChannel);
      span.end();
      return { headers, whenInstrumented, id: span.spanContext() };
    });
    expect(inside.headers.traceparent).toBe(`00-${inside.id.traceId}-${inside.id.spanId}-01`);
    expect(inside.whenInstrumented).toEqual({});
  });
});
