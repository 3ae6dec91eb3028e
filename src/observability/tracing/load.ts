import type { Env } from '../../lib/env-vars.js';
import { tracingFrom } from './config.js';
import { NO_TRACING, type Tracing } from './tracing.js';

/**
 * Tracing as the environment configures it: the SDK is imported and started only when it is on
 * (the bundle keeps sdk.js as a file of its own, dist/tracing.js); otherwise {@link NO_TRACING},
 * and no OpenTelemetry module is ever loaded. Call it before the server is started.
 */
export async function loadTracing(env: Env): Promise<Tracing> {
  const config = tracingFrom(env);
  if (config === null) return NO_TRACING;
  const { startTracing } = await import('./sdk.js');
  return startTracing(config);
}
