import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { contextOf } from '../api/context.js';
import { operation } from '../api/operation.js';
import { type Http, principalOf, USER_TOKEN_ONLY } from '../api/route.js';
import { Label, ScopeName, Timestamp } from '../api/schemas.js';
import type { StepUp } from '../account/mfa/step-up.js';
import { notFound, ProblemError } from '../errors.js';
import { addressKey } from '../ratelimit/address.js';
import type { PolicyName } from '../ratelimit/policies.js';
import type { DeviceParts } from './wiring.js';

const UserCode = Type.String({ maxLength: 64, description: 'As the person typed it: any case, spaces and dashes allowed.', examples: ['WDJB-MJHT'] });

const Lookup = Type.Object(
  {
    user_code: Type.String({ maxLength: 9, examples: ['WDJB-MJHT'] }),
    client: Type.Object({ id: Type.String({ maxLength: 40 }), name: Type.String({ maxLength: 60 }) }, { additionalProperties: false }),
    device_name: Type.Union([Type.String({ maxLength: 64 }), Type.Null()], { description: 'What the device says it is: unverified, show it as such.' }),
    device_name_verified: Type.Boolean(),
    scopes: Type.Array(Type.Object({ name: ScopeName, description: Type.String({ maxLength: 500 }) }, { additionalProperties: false }), { maxItems: 1000 }),
    requested_at: Timestamp,
    expires_at: Timestamp,
    requester: Type.Object(
      { ip: Type.String({ maxLength: 64 }), user_agent: Type.Union([Type.String({ maxLength: 200 }), Type.Null()]) },
      { additionalProperties: false },
    ),
    same_network: Type.Boolean({ description: "Whether the request came from the caller's network (same /24 for IPv4, /56 for IPv6)." }),
  },
  { additionalProperties: false },
);

const CodeBody = Type.Object({ user_code: UserCode }, { additionalProperties: false });

const ApproveBody = (maxDays: number) =>
  Type.Object(
    {
      user_code: UserCode,
      scopes: Type.Optional(Type.Array(ScopeName, { maxItems: 1000, description: 'A subset of the requested scopes; omitted: all of them.' })),
      expires_in_days: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: maxDays, description: `Days until the token expires; at most DEVICE_TOKEN_MAX_DAYS (${maxDays}) and TOKEN_MAX_LIFETIME_DAYS.` })),
      name: Type.Optional({ ...Label, description: 'The new token\'s name; omitted: "<client> on <device> (<date>)".' }),
    },
    { additionalProperties: false },
  );

const MISS = 'Unknown, expired, already decided or used, or looked up too often: the same 404 in every case.';
const LIMIT = 'Failed lookups, approvals and denials count against 10 per user and 20 per address per 15 minutes (429, the right code included).';

/** Counts `points` (0: only checks) against a policy's key; @throws rate_limited once it is spent (http/rate-limit.ts). */
export type Enforce = (request: FastifyRequest, policy: PolicyName, key: string, points?: number) => Promise<void>;

/** `POST /api/device/lookup|approve|deny` (contract §13.6): the device page's calls, user tokens only. */
export function approvalRoutes(app: Http, device: DeviceParts, enforce: Enforce, stepUp: StepUp): void {
  const keys = (request: FastifyRequest) => [['device-lookup-user', `user:${principalOf(request).user.id}`], ['device-lookup-address', addressKey(request.server.clientAddress(request.raw))]] as const;
  /** Refused while a limit is spent (checked without counting); a 404 counts against both. */
  const limited = async <T>(request: FastifyRequest, run: () => Promise<T>): Promise<T> => {
    for (const [policy, key] of keys(request)) await enforce(request, policy, key, 0);
    try {
      return await run();
    } catch (error) {
      if (error instanceof ProblemError && error.code === 'not_found') for (const [policy, key] of keys(request)) await enforce(request, policy, key);
      throw error;
    }
  };
  const enabled = () => {
    if (!device.config.enabled) throw notFound();
  };

  app.post('/api/device/lookup', {
    ...operation({
      method: 'POST',
      operationId: 'lookUpDeviceRequest',
      tags: ['device'],
      summary: 'Look up a pending device login by its user code',
      description: `Needs a user token. Changes nothing but the code's lookup count: a code is served by its first 10 lookups. ${MISS} ${LIMIT}`,
      auth: USER_TOKEN_ONLY,
      body: CodeBody,
      problems: ['not_found'],
      success: { 200: { description: 'The request, for the person to check.', schema: Lookup } },
    }),
    handler: async (request) => {
      enabled();
      return limited(request, () => device.approval.lookUp(request.body.user_code, request.server.clientAddress(request.raw)));
    },
  });

  app.post('/api/device/approve', {
    ...operation({
      method: 'POST',
      operationId: 'approveDeviceRequest',
      tags: ['device'],
      summary: 'Approve a device login: the device gets an API token of yours',
      description: `Needs a user token from a recent login (\`auth_time\` within REAUTH_MAX_AGE_S) and, with a second factor, the step-up of POST /api/auth/reauth; else 401 \`insufficient_user_authentication\`. Binds you as the approver: the device's next poll gets the token. ${MISS} ${LIMIT}`,
      auth: USER_TOKEN_ONLY,
      mintsToken: true,
      body: ApproveBody(device.config.tokenMaxDays),
      problems: ['not_found'],
      success: { 204: { description: 'Approved.' } },
    }),
    handler: async (request, reply) => {
      enabled();
      const principal = principalOf(request);
      // Freshness for every approver, with or without a factor (contract §13.6).
      await stepUp.require(principal, { evenWithoutFactor: true });
      await limited(request, () => device.approval.approve(principal.user.id, request.body, contextOf(request)));
      return reply.code(204).send(null);
    },
  });

  app.post('/api/device/deny', {
    ...operation({
      method: 'POST',
      operationId: 'denyDeviceRequest',
      tags: ['device'],
      summary: 'Deny a device login',
      description: `Needs a user token. The device's next poll is told \`access_denied\`. ${MISS} ${LIMIT}`,
      auth: USER_TOKEN_ONLY,
      body: CodeBody,
      problems: ['not_found'],
      success: { 204: { description: 'Denied.' } },
    }),
    handler: async (request, reply) => {
      enabled();
      await limited(request, () => device.approval.deny(principalOf(request).user.id, request.body.user_code, contextOf(request)));
      return reply.code(204).send(null);
    },
  });
}
