import { bool, ConfigError, type Env, raw } from '../../lib/env-vars.js';

/** Where spans go (OTEL_TRACES_EXPORTER, `otlp` by default). */
export type TraceExporter = 'otlp' | 'console' | 'zipkin';
/** How OTLP is sent (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL). */
export type OtlpProtocol = 'http/protobuf' | 'http/json' | 'grpc';

const EXPORTERS: readonly string[] = ['otlp', 'console', 'zipkin'];
const PROTOCOLS: readonly string[] = ['http/protobuf', 'http/json', 'grpc'];

/**
 * Tracing's own settings, and which exporters to build; each exporter reads its endpoint, headers
 * and timeout from the standard OTEL_EXPORTER_* variables itself, and the SDK the resource.
 */
export interface TracingConfig {
  readonly exporters: readonly TraceExporter[];
  readonly otlpProtocol: OtlpProtocol;
  /** Record `client.address` (the address the rate limiter sees) on server spans: personal data. */
  readonly recordClientIp: boolean;
  /** The root sampler's ratio when OTEL_TRACES_SAMPLER is unset; null when it is set (the SDK reads it). */
  readonly defaultRatio: number | null;
  /** OTEL_SERVICE_NAME unless it (or service.name in OTEL_RESOURCE_ATTRIBUTES) is set. */
  readonly serviceName: string | null;
}

/** 1 % of traces started here; a caller's sampled flag decides for the traces it started. */
const DEFAULT_RATIO = 0.01;

/**
 * Tracing is on when an exporter is configured: OTEL_EXPORTER_OTLP_ENDPOINT (or its traces-only
 * twin) or OTEL_TRACES_EXPORTER other than `none`. OTEL_SDK_DISABLED=true turns it off. Null when off.
 */
export function tracingFrom(env: Env): TracingConfig | null {
  const recordClientIp = bool(env, 'OTEL_RECORD_CLIENT_IP', false);
  const exporter = raw(env, 'OTEL_TRACES_EXPORTER')?.toLowerCase();
  const endpoint = raw(env, 'OTEL_EXPORTER_OTLP_ENDPOINT') ?? raw(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  if (bool(env, 'OTEL_SDK_DISABLED', false) || exporter === 'none' || (exporter === undefined && endpoint === undefined)) return null;
  let defaultRatio: number | null = null;
  if (raw(env, 'OTEL_TRACES_SAMPLER') === undefined) {
    const arg = raw(env, 'OTEL_TRACES_SAMPLER_ARG');
    defaultRatio = arg === undefined ? DEFAULT_RATIO : Number(arg);
    if (!/^\d*\.?\d+$/.test(arg ?? '0') || !(defaultRatio >= 0 && defaultRatio <= 1)) {
      throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got "${arg}"`);
    }
  }
  const exporters = (exporter ?? 'otlp').split(',').map((name) => name.trim());
  const unknown = exporters.find((name) => !EXPORTERS.includes(name));
  if (unknown !== undefined) throw new ConfigError(`OTEL_TRACES_EXPORTER must list ${EXPORTERS.join(', ')} or be none, got "${unknown}"`);
  const protocol = (raw(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? raw(env, 'OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf').toLowerCase();
  if (!PROTOCOLS.includes(protocol)) throw new ConfigError(`OTEL_EXPORTER_OTLP_PROTOCOL must be ${PROTOCOLS.join(', ')}, got "${protocol}"`);
  const named = raw(env, 'OTEL_SERVICE_NAME') !== undefined || /(^|,)\s*service\.name\s*=/.test(raw(env, 'OTEL_RESOURCE_ATTRIBUTES') ?? '');
  return { exporters: exporters as TraceExporter[], otlpProtocol: protocol as OtlpProtocol, recordClientIp, defaultRatio, serviceName: named ? null : 'rz-auth' };
}
