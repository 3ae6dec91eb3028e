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
    handler: async () => {
      const checks = await readiness();
      const failed = Object.entries(checks).flatMap(([name, r]) => (r.ok ? [] : [{ field: name, message: `unreachable: ${r.error}` }]));
      if (failed.length > 0) {
        throw new ProblemError('unavailable', { detail: `Not ready: ${failed.map((f) => f.field).join(', ')} unreachable.`, errors: failed });
      }
      return { status: 'ready' };
    },
  });
}
