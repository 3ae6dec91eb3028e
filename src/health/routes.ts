import { Type } from 'typebox';
import { ProblemError } from '../errors.js';
import type { Http } from '../api/route.js';
import type { Readiness } from './service.js';

const Status = Type.Object({ status: Type.String() }, { additionalProperties: false });

/** Liveness and readiness probes for load balancers and orchestrators (no authentication). */
export function healthRoutes(app: Http, readiness: () => Promise<Readiness>): void {
  app.get('/healthz', {
    schema: {
      tags: ['operations'],
      summary: 'Liveness: the process is up and serving',
      response: { 200: Status },
    },
    handler: async () => ({ status: 'ok' }),
  });

  app.get('/readyz', {
    schema: {
      tags: ['operations'],
      summary: 'Readiness: the database (and Redis, when configured) answer',
      description: '503 `unavailable` naming each store that did not answer within 2 s.',
      response: { 200: Status },
    },
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
