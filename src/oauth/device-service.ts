import { randomUUID } from 'node:crypto';
import { auditEvent, type RequestContext } from '../audit/events.js';
import { type Clock, DAY_MS, iso } from '../clock.js';
import type { OwnershipCaps } from '../lib/caps.js';
import type { UserStore } from '../account/user-store.js';
import type { MfaRequirement } from '../account/mfa/requirement.js';
import type { TokenPolicy } from '../tokens/policy.js';
import { mintToken, tokenDetails } from '../tokens/service.js';
import type { TokenCounts } from '../observability/metrics/tokens.js';
import type { OAuthClients } from './clients.js';
import { cleanDeviceName, deviceCodeDigest, deviceTokenName, displayUserCode, newDeviceCode, newUserCode } from './codes.js';
import { type DeviceFlowConfig, publicLink } from './config.js';
import type { DeviceRequestStore } from './device-store.js';
import { invalidGrant, invalidRequest, OAuthError } from './errors.js';
import type { DeviceCounts } from '../observability/metrics/device.js';

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
/** RFC 8628 §3.5: each `slow_down` adds 5 seconds to the interval. */
export const SLOW_DOWN_STEP_S = 5;

export interface DeviceFlowDeps {
  readonly config: DeviceFlowConfig;
  readonly clients: OAuthClients;
  readonly store: DeviceRequestStore;
  readonly users: UserStore;
  readonly requirement: MfaRequirement;
  readonly policy: TokenPolicy;
  readonly caps: OwnershipCaps;
  readonly clock: Clock;
  readonly tokenCounts: TokenCounts | null;
  readonly counts: DeviceCounts | null;
}

/** What a device authorization request carries (RFC 8628 §3.1), empty values already dropped. */
export type OAuthParams = Readonly<Record<string, string>>;

/** RFC 8628 device authorization and the device grant of the token endpoint (contract §13.5). */
export class DeviceFlow {
  constructor(private readonly deps: DeviceFlowDeps) {}

  async authorize(params: OAuthParams, context: RequestContext & { address: string }) {
    const { config, clients, store, clock } = this.deps;
    if (params.client_id === undefined) throw invalidRequest('client_id is required.');
    const client = await clients.find(params.client_id);
    if (!client || client.disabled) throw new OAuthError(401, 'invalid_client', 'No enabled client has this client_id.');
    const requested = params.scope === undefined ? client.defaultScopes : [...new Set(params.scope.split(' ').filter(Boolean))].sort();
    if (requested.some((s) => !client.scopes.includes(s))) throw new OAuthError(400, 'invalid_scope', `A requested scope is not allowed for ${client.id}.`);
    const deviceName = cleanDeviceName(params.device_name);
    if (deviceName === false) throw invalidRequest('device_name must be 1 to 64 characters without control characters.');
    const now = clock.now();
    const deviceCode = newDeviceCode();
    const base = {
      id: randomUUID(),
      device_code_digest: deviceCodeDigest(deviceCode),
      client_id: client.id,
      scopes: JSON.stringify(requested),
      device_name: deviceName,
      request_ip: context.address,
      user_agent: context.userAgent?.slice(0, 200) ?? null,
      created_at: iso(now),
      expires_at: iso(now + config.codeTtlS * 1000),
      state: 'pending' as const,
      interval_s: config.pollIntervalS,
      last_poll_at: null,
      approver_id: null,
      approved_scopes: null,
      approved_days: null,
      approved_name: null,
      token_id: null,
    };
    const event = auditEvent({ type: 'device.requested', userId: null, subject: { type: 'device_request', id: base.id }, details: { client_id: client.id, scopes: requested, device_name: deviceName } }, context, now);
    // A collision among pending codes is rare (20^8 codes); the unique index refuses it, and a new code is drawn.
    for (let attempt = 0; ; attempt++) {
      const userCode = newUserCode();
      try {
        if (!(await store.create({ ...base, user_code: userCode }, config.maxPendingPerAddress, iso(now), event))) {
          throw new OAuthError(429, 'rate_limited', `This address holds ${config.maxPendingPerAddress} pending requests already (DEVICE_MAX_PENDING_PER_IP): finish or wait for one.`, { 'retry-after': String(config.codeTtlS) });
        }
      } catch (error) {
        if (error instanceof OAuthError || attempt >= 4) throw error;
        continue;
      }
      this.deps.counts?.request('requested');
      const uri = publicLink(config.publicUrl as URL, 'device');
      const shown = displayUserCode(userCode);
      return {
        device_code: deviceCode,
        user_code: shown,
        verification_uri: uri,
        verification_uri_complete: `${uri}?user_code=${shown}`,
        expires_in: config.codeTtlS,
        interval: config.pollIntervalS,
      };
    }
  }

  /** One poll of the token endpoint with the device grant; the token answer, or the OAuthError to send. */
  async poll(params: OAuthParams, context: RequestContext) {
    const { store, clients, clock } = this.deps;
    if (params.grant_type === undefined) throw invalidRequest('grant_type is required.');
    if (params.grant_type !== DEVICE_GRANT) throw new OAuthError(400, 'unsupported_grant_type', `Only ${DEVICE_GRANT} is supported.`);
    if (params.device_code === undefined || params.client_id === undefined) throw invalidRequest('device_code and client_id are required.');
    // A device code is 43 characters: anything much longer is not one, and is not hashed.
    const row = params.device_code.length <= 128 ? await store.findByDigest(deviceCodeDigest(params.device_code)) : undefined;
    if (!row || row.client_id !== params.client_id || row.state === 'redeemed') throw invalidGrant();
    const now = clock.now();
    if (row.state === 'denied') {
      if (await store.denialSeen(row.id, iso(now))) throw new OAuthError(400, 'access_denied', 'The request was denied.');
      throw invalidGrant();
    }
    const client = await clients.find(row.client_id);
    if (Date.parse(row.expires_at) <= now || !client || client.disabled) {
      this.deps.counts?.request('expired');
      throw new OAuthError(400, 'expired_token', 'The device code has expired: start again.');
    }
    if (row.state === 'pending') {
      const due = row.last_poll_at === null || now - Date.parse(row.last_poll_at) >= row.interval_s * 1000;
      if (due && (await store.recordPoll(row.id, row.last_poll_at, iso(now)))) throw new OAuthError(400, 'authorization_pending', 'The request is waiting for approval.');
      await store.slowDown(row.id, SLOW_DOWN_STEP_S, iso(now));
      throw new OAuthError(400, 'slow_down', `Polling too fast: wait at least ${row.interval_s + SLOW_DOWN_STEP_S} seconds between polls.`);
    }
    return this.redeem(row, client.name, context, now);
  }

  private async redeem(row: NonNullable<Awaited<ReturnType<DeviceRequestStore['findByDigest']>>>, clientName: string, context: RequestContext, now: number) {
    const { store, users, requirement, policy, caps } = this.deps;
    const userId = row.approver_id ?? '';
    const user = await users.findById(userId);
    if (!user || (requirement.on && (await requirement.enrolmentDue(userId)))) throw new OAuthError(400, 'access_denied', 'The approving account can no longer receive tokens.');
    const maxDays = policy.maxLifetimeDays === null ? Infinity : policy.maxLifetimeDays;
    const days = Math.min(row.approved_days ?? this.deps.config.tokenMaxDays, maxDays);
    const scopes = JSON.parse(row.approved_scopes ?? '[]') as string[];
    const expiresAt = now + days * DAY_MS;
    const { value, record } = mintToken('api', {
      userId,
      appId: null,
      name: row.approved_name ?? deviceTokenName(clientName, row.device_name, now),
      scopes,
      createdAt: iso(now),
      expiresAt: iso(expiresAt),
      allowedCidrs: null,
    });
    const token = { ...record, device: { clientId: row.client_id, deviceName: row.device_name } };
    const details = { ...tokenDetails(record), scopes, expires_at: iso(expiresAt), origin: 'device_flow', client_id: row.client_id, device_name: row.device_name, request_ip: row.request_ip };
    const event = auditEvent({ type: 'token.created', userId, actor: { type: 'user', id: userId }, subject: { type: 'token', id: record.id }, details }, context, now);
    const outcome = await store.redeem(row.id, token, event, caps.apiTokensPerUser);
    if (outcome === 'gone') throw invalidGrant();
    if (outcome === 'cap') throw new OAuthError(400, 'access_denied', `The account holds the most API tokens it may (${caps.apiTokensPerUser}): revoke one and log in again.`);
    this.deps.tokenCounts?.created('api_token', 'device_flow');
    this.deps.counts?.request('redeemed');
    return { access_token: value, token_type: 'Bearer' as const, expires_in: Math.round((expiresAt - now) / 1000), scope: scopes.join(' '), token_id: record.id };
  }
}
