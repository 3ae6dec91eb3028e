import type { Transaction } from 'kysely';
import { auditEvent, type RequestContext } from '../audit/events.js';
import type { Tables } from '../db/tables.js';
import type { Clock } from '../clock.js';
import { type FieldError, notFound, validationFailed } from '../errors.js';
import { formatIp, isIPv4, networkAddress, parseIp, unmapped } from '../lib/ip.js';
import { cleanLabel } from '../lib/text.js';
import type { ScopeCatalogue } from '../scopes/catalogue.js';
import type { TokenPolicy } from '../tokens/policy.js';
import type { OAuthClients } from './clients.js';
import { displayUserCode, normalizeUserCode } from './codes.js';
import type { DeviceFlowConfig } from './config.js';
import type { DeviceRequestStore } from './device-store.js';
import type { DeviceCounts } from '../observability/metrics/device.js';

export interface ApproveInput {
  readonly user_code: string;
  readonly scopes?: string[] | undefined;
  readonly expires_in_days?: number | undefined;
  readonly name?: string | undefined;
}

/** Whether two addresses share a /24 (IPv4) or a /56 (IPv6): the same network, as the page warns of (contract §13.6). */
export function sameNetwork(a: string, b: string): boolean {
  const x = parseIp(a);
  const y = parseIp(b);
  if (!x || !y) return false;
  const [ux, uy] = [unmapped(x), unmapped(y)];
  if (isIPv4(ux) !== isIPv4(uy)) return false;
  const prefix = isIPv4(ux) ? 24 : 56;
  return formatIp(networkAddress(ux, prefix)) === formatIp(networkAddress(uy, prefix));
}

export interface ApprovalDeps {
  readonly config: DeviceFlowConfig;
  readonly clients: OAuthClients;
  readonly store: DeviceRequestStore;
  readonly catalogue: ScopeCatalogue;
  readonly policy: TokenPolicy;
  readonly clock: Clock;
  readonly counts: DeviceCounts | null;
  /** Mails the approver the notice in the approving transaction; null while mail is off. */
  readonly notice: ((trx: Transaction<Tables>, userId: string, data: Record<string, string>) => Promise<void>) | null;
}

/**
 * The approval API behind the device page (contract §13.6). Every miss is the same `404 not_found`:
 * unknown, expired, decided, redeemed or past its lookups. A code outside the alphabet never
 * reaches the store.
 */
export class DeviceApproval {
  constructor(private readonly deps: ApprovalDeps) {}

  /** The stored form of a typed code; @throws not_found (a failed lookup) for one that cannot be a code. */
  private code(input: string): string {
    const code = normalizeUserCode(input);
    if (code === null) throw this.miss();
    return code;
  }

  private miss() {
    this.deps.counts?.lookupFailed();
    return notFound();
  }

  async lookUp(input: string, callerAddress: string) {
    const { store, clients, catalogue, clock } = this.deps;
    const row = await store.lookUp(this.code(input), new Date(clock.now()).toISOString());
    const client = row && (await clients.find(row.client_id));
    if (!row || !client || client.disabled) throw this.miss();
    const scopes = JSON.parse(row.scopes) as string[];
    return {
      user_code: displayUserCode(row.user_code),
      client: { id: client.id, name: client.name },
      device_name: row.device_name,
      device_name_verified: false,
      scopes: scopes.map((name) => ({ name, description: catalogue.entries.find((e) => e.name === name)?.description ?? '' })),
      requested_at: row.created_at,
      expires_at: row.expires_at,
      requester: { ip: row.request_ip, user_agent: row.user_agent },
      same_network: sameNetwork(row.request_ip, callerAddress),
    };
  }

  async approve(userId: string, input: ApproveInput, context: RequestContext): Promise<void> {
    const { store, clients, config, policy, clock } = this.deps;
    const now = clock.now();
    const row = await store.pending(this.code(input.user_code), new Date(now).toISOString());
    const client = row && (await clients.find(row.client_id));
    if (!row || !client || client.disabled) throw this.miss();
    const requested = JSON.parse(row.scopes) as string[];
    const errors: FieldError[] = [];
    const scopes = input.scopes === undefined ? requested : [...new Set(input.scopes)].sort();
    if (scopes.some((s) => !requested.includes(s))) errors.push({ field: 'scopes', message: 'must be among the scopes the device asked for' });
    const days = input.expires_in_days ?? Math.min(config.tokenMaxDays, client.maxDays ?? Infinity, policy.maxLifetimeDays ?? Infinity);
    if (policy.maxLifetimeDays !== null && days > policy.maxLifetimeDays) errors.push({ field: 'expires_in_days', message: `must be at most ${policy.maxLifetimeDays} (TOKEN_MAX_LIFETIME_DAYS)` });
    if (client.maxDays !== null && days > client.maxDays) errors.push({ field: 'expires_in_days', message: `must be at most ${client.maxDays} for ${client.id}` });
    const name = input.name === undefined ? null : cleanLabel(input.name, 'name', 100);
    if (name !== null && typeof name !== 'string') errors.push(name);
    if (errors.length > 0) throw validationFailed(errors);
    const details = { client_id: client.id, device_name: row.device_name, scopes, expires_in_days: days, request_ip: row.request_ip };
    const event = auditEvent({ type: 'device.approved', userId, subject: { type: 'device_request', id: row.id }, details }, context, now);
    const approval = { approverId: userId, scopes, days, name: typeof name === 'string' ? name : null };
    const { notice } = this.deps;
    const mail = notice && ((trx: Transaction<Tables>) => notice(trx, userId, { client_name: client.name, device_name: row.device_name ?? 'unknown device', request_ip: row.request_ip }));
    if (!(await store.decide(row.id, approval, new Date(now).toISOString(), event, mail ?? undefined))) throw notFound();
    this.deps.counts?.request('approved');
  }

  async deny(userId: string, input: string, context: RequestContext): Promise<void> {
    const { store, clock } = this.deps;
    const now = clock.now();
    const row = await store.pending(this.code(input), new Date(now).toISOString());
    if (!row) throw this.miss();
    const event = auditEvent({ type: 'device.denied', userId, subject: { type: 'device_request', id: row.id }, details: { client_id: row.client_id, device_name: row.device_name } }, context, now);
    if (!(await store.decide(row.id, null, new Date(now).toISOString(), event))) throw notFound();
    this.deps.counts?.request('denied');
  }
}
