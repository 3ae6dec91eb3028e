import { Type } from 'typebox';
import { operation } from '../api/operation.js';
import type { Http } from '../api/route.js';
import { ProblemError } from '../errors.js';
import type { Readiness } from './service.js';

const status = (value: string) => Type.Object({ status: Type.Enum([value]) }, { additionalProperties: false });

/** Liveness and readiness probes for load balancers and orchestrators (no authentication). */
export function healthRoutes(app: Http, readiness: () => Promise<Readiness>): void {
  // Probes are not rate-limited: a load balancer polls them, often from one address.
  app.get('/healthz', {
    ...operation({
      method: 'GET',
      operationId: 'checkLiveness',
      tags: ['operations'],
      summary: 'Liveness: the process is up and serving',
      description: 'No authentication, no rate limit, no store touched.',
      auth: 'public',
      rateLimit: 'none',
      success: { 200: { description: 'Serving.', schema: status('ok') } },
    }),
    handler: async () => ({ status: 'ok' }),
  });

  app.get('/readyz', {
    ...operation({
      method: 'GET',
      operationId: 'checkReadiness',
      tags: ['operations'],
      summary: 'Readiness: the database (and Redis, when configured) answer',
      description: 'No authentication, no rate limit. 503 `unavailable` names each store that did not answer within 2 s in `errors`.',
      auth: 'public',
      rateLimit: 'none',
      success: { 200: { description: 'Ready.', schema: status('ready') } },
      problems: ['unavailable'],
    }),
    handler: async (request) => {
      const failed: string[] = [];
      for (const [name, check] of Object.entries(await readiness())) {
        if (check.ok) continue;
        failed.push(name);
        // What the driver said is for operators only: the answer names the dependency, nothing more.
        request.log.warn({ err: check.error, dependency: name }, 'readiness check failed');
      }
      if (failed.length > 0) {
        const errors = failed.map((name) => ({ field: name, message: 'unreachable' }));
        throw new ProblemError('unavailable', { detail: `Not ready: ${failed.join(', ')} unreachable.`, errors });
      }
      return { status: 'ready' };
    },
  });
}
