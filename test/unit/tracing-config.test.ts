import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/lib/env-vars.js';
import { tracingFrom } from '../../src/observability/tracing/config.js';

describe('tracing configuration (OTEL_*)', () => {
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };

  it('off unless an endpoint or a traces exporter is set; OTEL_TRACES_EXPORTER=none and OTEL_SDK_DISABLED turn it off', () => {
    expect(tracingFrom({})).toBeNull();
    expect(tracingFrom({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' })).toBeNull();
    expect(tracingFrom({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' })).toBeNull();
    expect(tracingFrom({ ...endpoint, OTEL_SDK_DISABLED: 'true' })).toBeNull();
    expect(tracingFrom(endpoint)).not.toBeNull();
    expect(tracingFrom({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).not.toBeNull();
    expect(tracingFrom({ OTEL_TRACES_EXPORTER: 'console' })).not.toBeNull();
  });

  it('parentbased_traceidratio at 0.01 when OTEL_TRACES_SAMPLER is unset, its argument when given; the SDK reads a set sampler', () => {
    expect(tracingFrom(endpoint)).toEqual({ exporters: ['otlp'], otlpProtocol: 'http/protobuf', recordClientIp: false, defaultRatio: 0.01, serviceName: 'rz-auth' });
    expect(tracingFrom({ ...endpoint, OTEL_TRACES_SAMPLER_ARG: '0.25' })?.defaultRatio).toBe(0.25);
    expect(tracingFrom({ ...endpoint, OTEL_TRACES_SAMPLER: 'always_on' })?.defaultRatio).toBeNull();
    for (const bad of ['2', '-1', 'half', '0.5.1']) expect(() => tracingFrom({ ...endpoint, OTEL_TRACES_SAMPLER_ARG: bad }), bad).toThrow(ConfigError);
  });

  it('service name rz-auth unless OTEL_SERVICE_NAME or service.name in OTEL_RESOURCE_ATTRIBUTES names one', () => {
    expect(tracingFrom({ ...endpoint, OTEL_SERVICE_NAME: 'auth-eu' })?.serviceName).toBeNull();
    expect(tracingFrom({ ...endpoint, OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,service.name=auth' })?.serviceName).toBeNull();
    expect(tracingFrom({ ...endpoint, OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod' })?.serviceName).toBe('rz-auth');
  });

  it('exporters from OTEL_TRACES_EXPORTER (otlp by default) and the OTLP protocol, the traces-only variable first; anything else refuses the start', () => {
    expect(tracingFrom({ OTEL_TRACES_EXPORTER: 'otlp, console' })?.exporters).toEqual(['otlp', 'console']);
    expect(tracingFrom({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })?.otlpProtocol).toBe('grpc');
    expect(tracingFrom({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' })?.otlpProtocol).toBe('http/json');
    expect(() => tracingFrom({ OTEL_TRACES_EXPORTER: 'jaeger' })).toThrow(/OTEL_TRACES_EXPORTER/);
    expect(() => tracingFrom({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'udp' })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL/);
  });

  it('OTEL_RECORD_CLIENT_IP: false by default, a boolean, checked even with tracing off', () => {
    expect(tracingFrom({ ...endpoint, OTEL_RECORD_CLIENT_IP: 'true' })?.recordClientIp).toBe(true);
    expect(() => tracingFrom({ OTEL_RECORD_CLIENT_IP: 'maybe' })).toThrow(/OTEL_RECORD_CLIENT_IP/);
  });
});
