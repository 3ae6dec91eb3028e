import type { FastifyInstance } from 'fastify';
import { createApp } from './app.js';
import type { Config } from './config.js';
import { createLogDestination, flushLog } from './http/logging.js';
import { holdTickShape } from './lib/tick-shape.js';
import { createServices, type Services } from './composition-root.js';
import { type MailChild, superviseMailChild } from './mail/supervisor.js';
import { type MetricsListener, startMetricsListener } from './observability/metrics/listener.js';
import { NO_TRACING, type Tracing } from './observability/tracing/tracing.js';

export interface RunningServer {
  readonly app: FastifyInstance;
  readonly services: Services;
  /** The address actually bound (useful with PORT=0). */
  readonly url: string;
  /** The metrics listener's address (METRICS_ADDR), null when metrics are off. */
  readonly metricsUrl: string | null;
  /** The supervised `rz-auth mail deliver` child (MAIL_WORKER=process), null otherwise. */
  readonly mailChild: MailChild | null;
  /** Stops accepting connections, finishes in-flight requests, flushes and closes the store. */
  close(): Promise<void>;
}

/** Starts rz-auth: services, HTTP app, listen; `tracing` is started before (src/observability/tracing/load.ts). */
export async function startServer(config: Config, tracing: Tracing = NO_TRACING): Promise<RunningServer> {
  holdTickShape();
  let app: FastifyInstance | undefined;
  let metrics: MetricsListener | null = null;
  // What fails before the log exists (Redis not reachable at start-up) is logged once it does.
  const early: Array<[unknown, string]> = [];
  const services = await createServices(config, {
    tracing,
    onError: (error, context) => (app ? app.log.error({ err: error }, context) : early.length < 10 && early.push([error, context])),
  });
  const logStream = createLogDestination();
  try {
    app = await createApp(services, { logStream });
    for (const [error, context] of early) app.log.error({ err: error }, context);
    const url = await app.listen({ port: config.port, host: config.host });
    // Its own listener, never the API's port (docs/operations.md); scrapes go on while requests drain.
    if (config.metrics && services.metrics) metrics = await startMetricsListener(config.metrics, services.metrics);
    // MAIL_WORKER: only `inline` sends mail from this process (docs/email.md).
    services.background.start({ except: config.mail?.worker === 'inline' ? [] : ['mailDelivery'] });
    const running = app;
    const listener = metrics;
    const mailChild = config.mail?.worker === 'process' ? startMailChild(running, services) : null;
    return {
      app: running,
      services,
      url,
      metricsUrl: listener?.url ?? null,
      mailChild,
      async close() {
        await Promise.all([running.close(), mailChild?.stop()]);
        await listener?.close();
        await services.close();
        await flushLog(logStream);
        await tracing.shutdown();
      },
    };
  } catch (error) {
    await metrics?.close();
    await app?.close();
    await services.close();
    throw error;
  }
}

/** The delivery child, logging to the server's log, its outcomes counted in the server's registry. */
function startMailChild(app: FastifyInstance, services: Services): MailChild {
  return superviseMailChild({
    count: services.mailCount,
    stopTimeoutMs: services.config.shutdownTimeoutMs,
    log: (level, message, fields) => app.log[level](fields, message),
  });
}

/** Closes gracefully on SIGTERM or SIGINT; a second signal exits at once. */
export function closeOnSignals(server: RunningServer): void {
  let closing = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (closing) process.exit(1);
    closing = true;
    server.app.log.info({ signal }, 'shutting down');
    // In-flight requests get SHUTDOWN_TIMEOUT_MS to finish; then the process goes anyway.
    setTimeout(() => {
      server.app.log.error('shutdown timed out');
      process.exit(1);
    }, server.services.config.shutdownTimeoutMs).unref();
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        server.app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
