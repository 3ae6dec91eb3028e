import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseYaml } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';

/**
 * The metrics rz-auth and @rz-auth/verify export, with their labels: the closed set of values where
 * the label has one, null where the values are the deployment's (routes, service names, policies).
 * Mirrors the table of docs/operations.md; a dashboard or rule naming anything else is wrong.
 */
const TOKEN_TYPES = ['user', 'api_token', 'app_token', 'derived', 'service', 'none'];
type Kind = 'counter' | 'gauge' | 'histogram';
const METRICS: Record<string, { kind: Kind; labels: Record<string, readonly string[] | null> }> = {
  rz_http_requests_total: { kind: 'counter', labels: { route: null, method: null, status: null } },
  rz_http_request_duration_seconds: { kind: 'histogram', labels: { route: null, method: null } },
  rz_auth_decisions_total: {
    kind: 'counter',
    labels: { token_type: TOKEN_TYPES, outcome: ['ok', 'invalid_token', 'insufficient_scope', 'insufficient_user_authentication', 'rate_limited', 'network_refused'] },
  },
  rz_logins_total: { kind: 'counter', labels: { outcome: ['success', 'invalid_credentials', 'mfa_required', 'rate_limited'], method: ['password', 'passkey'] } },
  rz_mfa_verifications_total: { kind: 'counter', labels: { method: ['totp', 'webauthn', 'recovery_code'], outcome: ['ok', 'failed', 'replayed', 'rate_limited'] } },
  rz_tokens_created_total: { kind: 'counter', labels: { token_type: TOKEN_TYPES, origin: ['api', 'page', 'device_flow', 'rotation', 'cli_operator'] } },
  rz_tokens_revoked_total: {
    kind: 'counter',
    labels: { token_type: TOKEN_TYPES, reason: ['user', 'self', 'rotation', 'expired', 'idle', 'leak', 'app_deleted', 'user_deleted', 'parent'] },
  },
  rz_introspections_total: { kind: 'counter', labels: { service: null, active: ['true', 'false'] } },
  rz_introspection_duration_seconds: { kind: 'histogram', labels: {} },
  rz_event_streams_open: { kind: 'gauge', labels: {} },
  rz_events_published_total: { kind: 'counter', labels: { type: null } },
  rz_event_delivery_lag_seconds: { kind: 'histogram', labels: {} },
  rz_revocation_propagation_seconds: { kind: 'histogram', labels: {} },
  rz_change_feed_gaps_total: { kind: 'counter', labels: { reason: ['lost_publish', 'redis_reset', 'resync'] } },
  rz_ratelimit_rejections_total: { kind: 'counter', labels: { policy: null } },
  rz_password_hash_duration_seconds: { kind: 'histogram', labels: { op: ['hash', 'verify'] } },
  rz_password_hash_queue_depth: { kind: 'gauge', labels: {} },
  rz_webhook_deliveries_total: { kind: 'counter', labels: { outcome: ['success', 'failure', 'gave_up'] } },
  rz_webhook_queue_depth: { kind: 'gauge', labels: {} },
  rz_device_requests_total: { kind: 'counter', labels: { outcome: ['requested', 'approved', 'denied', 'expired', 'redeemed'] } },
  rz_device_lookup_failures_total: { kind: 'counter', labels: {} },
  rz_signing_keys: { kind: 'gauge', labels: { state: ['active', 'retired'] } },
  rz_store_up: { kind: 'gauge', labels: {} },
  rz_redis_up: { kind: 'gauge', labels: {} },
  rz_mail_deliveries_total: { kind: 'counter', labels: { outcome: ['success', 'failure', 'gave_up'] } },
  rz_mail_queue_depth: { kind: 'gauge', labels: {} },
  rz_verify_requests_total: { kind: 'counter', labels: { outcome: null } },
  rz_verify_cache_hits_total: { kind: 'counter', labels: {} },
  rz_verify_introspection_duration_seconds: { kind: 'histogram', labels: {} },
  rz_verify_stream_connected: { kind: 'gauge', labels: {} },
  rz_verify_revocation_propagation_seconds: { kind: 'histogram', labels: {} },
};
/** Labels every series has from the scrape, and a histogram bucket's bound. */
const TARGET_LABELS = ['instance', 'job'];

/** The metric a series name belongs to (a histogram's _bucket, _sum and _count are its own), or null. */
function metricOf(series: string): { name: string; bucket: boolean } | null {
  if (METRICS[series] !== undefined) return { name: series, bucket: false };
  const match = /^(.*)_(bucket|sum|count)$/.exec(series);
  const base = match?.[1];
  return base !== undefined && METRICS[base]?.kind === 'histogram' ? { name: base, bucket: match?.[2] === 'bucket' } : null;
}

/** Brackets of every kind close in order, outside string literals. */
function balanced(expr: string): boolean {
  const stack: string[] = [];
  const pairs: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  let quote: string | null = null;
  for (const char of expr) {
    if (quote !== null) quote = char === quote ? null : quote;
    else if (char === '"' || char === "'") quote = char;
    else if ('([{'.includes(char)) stack.push(char);
    else if (pairs[char] !== undefined && stack.pop() !== pairs[char]) return false;
  }
  return stack.length === 0 && quote === null;
}

/** What is wrong with one PromQL expression: unknown names, labels or label values, unbalanced brackets. */
function problemsOf(expr: string): string[] {
  const problems: string[] = [];
  if (!balanced(expr)) problems.push(`unbalanced brackets: ${expr}`);
  const used = new Set<string>();
  for (const [series] of expr.matchAll(/\brz_[a-z0-9_]+/g)) {
    const metric = metricOf(series);
    if (metric === null) problems.push(`unknown metric ${series}`);
    else used.add(metric.name);
  }
  for (const [, series = '', matchers = ''] of expr.matchAll(/\b(rz_[a-z0-9_]+)\s*\{([^}]*)\}/g)) {
    const metric = metricOf(series);
    if (metric === null) continue;
    const labels = METRICS[metric.name]?.labels ?? {};
    for (const [, label = '', op = '', value = ''] of matchers.matchAll(/([A-Za-z_]\w*)\s*(=~|!~|!=|=)\s*"([^"]*)"/g)) {
      const allowed = labels[label];
      if (allowed === undefined && !(metric.bucket && label === 'le') && !TARGET_LABELS.includes(label)) problems.push(`${series} has no label ${label}`);
      else if (allowed && (op === '=' || op === '!=') && !allowed.includes(value)) problems.push(`${series}{${label}} is never "${value}"`);
    }
  }
  const known = new Set([...TARGET_LABELS, 'le', ...[...used].flatMap((name) => Object.keys(METRICS[name]?.labels ?? {}))]);
  for (const [, list = ''] of expr.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)) {
    for (const label of list.split(',').map((item) => item.trim()).filter(Boolean)) {
      if (!known.has(label)) problems.push(`grouping by ${label}, which none of ${[...used].join(', ')} has`);
    }
  }
  return problems;
}

const dir = join(import.meta.dirname, '..', '..', 'examples', 'observability');

interface Panel { title?: string; type: string; targets?: Array<{ expr: string }>; panels?: Panel[] }
const dashboard = JSON.parse(readFileSync(join(dir, 'grafana-dashboard.json'), 'utf8')) as { title: string; uid: string; panels: Panel[] };
const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
// Grafana's interval variable is not PromQL; any duration stands in for it.
const dashboardExprs = panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr.replaceAll('$__rate_interval', '5m')));

interface Rule { alert: string; expr: string; for?: string; labels?: Record<string, string>; annotations?: Record<string, string> }
const alertsText = readFileSync(join(dir, 'alerts.yaml'), 'utf8');
const alerts = parseYaml(alertsText) as { groups: Array<{ name: string; rules: Rule[] }> };
const rules = alerts.groups.flatMap((group) => group.rules);
const rule = (name: string): Rule => {
  const found = rules.find((item) => item.alert === name);
  if (found === undefined) throw new Error(`no alert ${name}`);
  return found;
};
const metricsIn = (exprs: readonly string[]) => new Set(exprs.flatMap((expr) => [...expr.matchAll(/\brz_[a-z0-9_]+/g)].map(([series]) => metricOf(series)?.name ?? series)));

describe('examples/observability', () => {
  it('the checker catches what it is there for', () => {
    expect(problemsOf('sum(rate(rz_http_requests_totl[5m]))')).toEqual(['unknown metric rz_http_requests_totl']);
    expect(problemsOf('sum(rate(rz_logins_total{outcome="failure"}[5m]))')).toEqual(['rz_logins_total{outcome} is never "failure"']);
    expect(problemsOf('sum(rate(rz_logins_total{user_id="1"}[5m]))')).toEqual(['rz_logins_total has no label user_id']);
    expect(problemsOf('sum by (route) (rate(rz_logins_total[5m]))')).toEqual(['grouping by route, which none of rz_logins_total has']);
    expect(problemsOf('histogram_quantile(0.99, sum by (le) (rate(rz_store_up_bucket[5m])))')).toEqual(['unknown metric rz_store_up_bucket']);
    expect(problemsOf('histogram_quantile(0.99, sum by (le) (rate(rz_revocation_propagation_seconds_bucket[5m]))')).toHaveLength(1);
    expect(problemsOf('sum(rate(rz_logins_total{outcome="success"}[5m)))')).toHaveLength(1);
    expect(problemsOf('histogram_quantile(0.99, sum by (le, op) (rate(rz_password_hash_duration_seconds_bucket{op="hash"}[5m])))')).toEqual([]);
  });

  it('the dashboard is Grafana JSON whose every query uses only the exported metrics, labels and values', () => {
    expect(dashboard).toMatchObject({ title: 'rz-auth', uid: expect.any(String) as unknown });
    expect(dashboardExprs.length).toBeGreaterThan(15);
    expect(dashboardExprs.flatMap(problemsOf)).toEqual([]);
  });

  it('the dashboard shows traffic, refusals, propagation, the feed, logins, queues, streams, introspection and dependencies', () => {
    expect([...metricsIn(dashboardExprs)]).toEqual(expect.arrayContaining([
      'rz_http_requests_total', 'rz_auth_decisions_total', 'rz_revocation_propagation_seconds', 'rz_verify_revocation_propagation_seconds',
      'rz_change_feed_gaps_total', 'rz_logins_total', 'rz_password_hash_queue_depth', 'rz_password_hash_duration_seconds',
      'rz_webhook_queue_depth', 'rz_webhook_deliveries_total', 'rz_event_streams_open', 'rz_introspection_duration_seconds', 'rz_store_up', 'rz_redis_up',
    ]));
    const propagation = panels.find((panel) => panel.title?.startsWith('Revocation propagation'));
    expect(propagation?.targets?.map((target) => target.expr.slice(0, 24))).toEqual(expect.arrayContaining(['histogram_quantile(0.5, ', 'histogram_quantile(0.99,']));
  });

  it('every alert rule is complete and its expression, summary and description name only exported metrics', () => {
    expect(rules.length).toBeGreaterThanOrEqual(7);
    for (const item of rules) {
      expect(item.alert, JSON.stringify(item)).toMatch(/^Rz[A-Za-z]+$/);
      expect(item.labels?.severity, item.alert).toMatch(/^(page|ticket)$/);
      expect(item.annotations?.summary, item.alert).toBeTruthy();
      if (item.for !== undefined) expect(item.for, item.alert).toMatch(/^\d+[smh]$/);
      expect(problemsOf(item.expr), item.alert).toEqual([]);
    }
    const mentioned = [...alertsText.matchAll(/\brz_[a-z0-9_]+/g)].map(([series]) => series);
    expect(mentioned.filter((series) => metricOf(series) === null)).toEqual([]);
  });

  it('the alerts hold the bars: propagation p99 over 100 ms for 5 min, any feed gap, 10x login failures, 100 device lookups a minute', () => {
    for (const name of ['RzRevocationPropagationSlow', 'RzVerifierRevocationPropagationSlow']) {
      expect(rule(name).expr).toMatch(/^histogram_quantile\(0\.99, sum by \(le\) \(rate\(rz_(verify_)?revocation_propagation_seconds_bucket\[5m\]\)\)\) > 0\.1$/);
      expect(rule(name).for).toBe('5m');
    }
    expect(rule('RzChangeFeedGap').expr).toMatch(/increase\(rz_change_feed_gaps_total\[\w+\]\)\) > 0$/);
    expect(rule('RzChangeFeedGap').for).toBeUndefined();
    expect(rule('RzLoginFailureSpike').expr).toMatch(/> 10 \* sum\(rate\(rz_logins_total\{outcome="invalid_credentials"\}\[1h\] offset \w+\)\)/);
    expect(rule('RzDeviceCodeGuessing').expr).toBe('sum(rate(rz_device_lookup_failures_total[2m])) * 60 > 100');
    expect(rule('RzWebhookQueueGrowing')).toMatchObject({ for: '15m', expr: expect.stringMatching(/^deriv\(max\(rz_webhook_queue_depth\)/) as unknown });
    expect(rule('RzNoEventStream').expr).toMatch(/^sum\(rz_event_streams_open\) == 0\s+and on \(\)\s+\(count\(rz_verify_stream_connected\) > 0 or /);
  });
});
