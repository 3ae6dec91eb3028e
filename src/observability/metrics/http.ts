import { Counter, type Registry } from 'prom-client';
import { type HotCount, HotCounter, HotHistogram, type HotObserve } from './hot.js';

/** The `route` of a request no route matched (404s, unparsable URLs): never the path as sent. */
export const UNMATCHED = 'unmatched';

/** 5 ms to 2.5 s: what a request of this service takes, from a cache hit to a password hash. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** The login routes, whose answers are the logins (`rz_logins_total`), and the method of each. */
const LOGIN_ROUTES: ReadonlyMap<string, string> = new Map([
  ['/api/auth/login', 'password'],
  ['/api/auth/passkey/login', 'passkey'],
]);
const LOGIN_OUTCOMES: Readonly<Record<number, string>> = { 200: 'success', 401: 'invalid_credentials', 429: 'rate_limited' };

/** A login's second step (contract §12.4): its success is the login's; its refusals are second-factor checks, counted as such. */
const SECOND_STEP = '/api/auth/mfa/verify';

/** A login's outcome from its answer: a right password that needs a second factor is `mfa_required` (contract §12.4). */
const loginOutcome = (status: number, code: string | null): string | undefined => (status === 401 && code === 'mfa_required' ? 'mfa_required' : LOGIN_OUTCOMES[status]);

/** The series of one route and method, resolved once: a request then costs no label lookup. */
interface RouteSeries {
  readonly duration: HotObserve;
  readonly statuses: Map<number, HotCount>;
}

/**
 * `rz_http_requests_total`, `rz_http_request_duration_seconds` and `rz_logins_total`, counted where
 * each request's access line is written. Labels come from closed sets: the route template (or
 * {@link UNMATCHED}), the method Node's parser accepted, the status code.
 */
export class HttpMetrics {
  private readonly requests: HotCounter;
  private readonly duration: HotHistogram;
  private readonly logins: Counter;
  private readonly routes = new Map<string, Map<string, RouteSeries>>();

  constructor(registry: Registry) {
    const registers = [registry];
    this.requests = new HotCounter(registry, 'rz_http_requests_total', 'HTTP requests answered, by route template, method and status.', ['route', 'method', 'status']);
    this.duration = new HotHistogram(registry, 'rz_http_request_duration_seconds', 'Time to answer an HTTP request, by route template and method.', BUCKETS);
    this.logins = new Counter({ name: 'rz_logins_total', help: 'Logins, by outcome and method (password or passkey).', labelNames: ['outcome', 'method'], registers });
  }

  /**
   * One answered request: `route` is the matched route's template, undefined when none matched;
   * `code` the problem's code when the answer was one.
   */
  answered(method: string, route: string | undefined, status: number, ms: number, code: string | null = null): void {
    const series = this.series(route ?? UNMATCHED, method);
    let counter = series.statuses.get(status);
    if (!counter) series.statuses.set(status, (counter = this.requests.child({ route: route ?? UNMATCHED, method, status: String(status) })));
    counter.inc();
    series.duration.observe(ms / 1000);
    const login = method === 'POST' && route !== undefined ? LOGIN_ROUTES.get(route) : undefined;
    if (login !== undefined) {
      const outcome = loginOutcome(status, code);
      if (outcome) this.logins.labels(outcome, login).inc();
    } else if (route === SECOND_STEP && method === 'POST' && status === 200) this.logins.labels('success', 'password').inc();
  }

  private series(route: string, method: string): RouteSeries {
    let byMethod = this.routes.get(route);
    if (!byMethod) this.routes.set(route, (byMethod = new Map()));
    let series = byMethod.get(method);
    if (!series) byMethod.set(method, (series = { duration: this.duration.child({ route, method }), statuses: new Map() }));
    return series;
  }
}
