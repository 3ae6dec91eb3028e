import { Type } from 'typebox';
import { contextOf } from '../api/context.js';
import { operation } from '../api/operation.js';
import type { Http } from '../api/route.js';
import { notFound } from '../errors.js';
import type { ScopeCatalogue } from '../scopes/catalogue.js';
import { publicLink } from './config.js';
import { DEVICE_GRANT } from './device-service.js';
import { invalidRequest } from './errors.js';
import { OAuthParam, oauthErrorResponse } from './schemas.js';
import type { DeviceParts } from './wiring.js';

const NO_STORE = 'Every answer carries `Cache-Control: no-store` and `Pragma: no-cache`.';
const BODIES = 'The body is a form (`application/x-www-form-urlencoded`) or JSON with the same fields; unknown parameters are ignored, an empty one is omitted, one given twice is `invalid_request` (RFC 6749 §3.1).';
const FORM = ['application/x-www-form-urlencoded', 'application/json'];

const AuthorizationBody = Type.Object(
  {
    client_id: OAuthParam('`rz-cli`, or a client the operator registered (`rz-auth clients create`).'),
    scope: OAuthParam("Space-separated scopes within the client's ceiling; omitted: the client's default scopes (`rz-cli`: none)."),
    device_name: OAuthParam('1–64 characters without control characters; shown to the approver as unverified.'),
  },
  { additionalProperties: false },
);

const Authorization = Type.Object(
  {
    device_code: Type.String({ maxLength: 43, description: '256 random bits, base64url: the secret the device polls with.' }),
    user_code: Type.String({ pattern: '^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$', maxLength: 9, examples: ['WDJB-MJHT'] }),
    verification_uri: Type.String({ format: 'uri', maxLength: 2048 }),
    verification_uri_complete: Type.String({ format: 'uri', maxLength: 2100 }),
    expires_in: Type.Integer({ format: 'int32', minimum: 1, maximum: 1800 }),
    interval: Type.Integer({ format: 'int32', minimum: 1, maximum: 3600 }),
  },
  { additionalProperties: false },
);

const TokenBody = Type.Object(
  {
    grant_type: OAuthParam(`\`${DEVICE_GRANT}\`.`),
    device_code: OAuthParam('The `device_code` of the authorization.'),
    client_id: OAuthParam('The client that asked for it.'),
  },
  { additionalProperties: false },
);

const IssuedToken = Type.Object(
  {
    access_token: Type.String({ maxLength: 52, description: 'An API token (`rz_`), shown only in this answer.' }),
    token_type: Type.Enum(['Bearer']),
    expires_in: Type.Integer({ format: 'int64', minimum: 0, maximum: 3_153_600_000, description: 'Seconds until the token expires.' }),
    scope: Type.String({ maxLength: 60_000, description: 'Space-separated; possibly narrower than requested (RFC 6749 §5.1).' }),
    token_id: Type.String({ format: 'uuid', maxLength: 36 }),
  },
  { additionalProperties: false },
);

const RevokeBody = Type.Object(
  {
    token: OAuthParam('An API or app token value: it revokes itself.'),
    token_type_hint: OAuthParam('Accepted and ignored.'),
    client_id: OAuthParam('Accepted and ignored.'),
  },
  { additionalProperties: false },
);

const Metadata = Type.Object(
  {
    issuer: Type.String({ maxLength: 2048 }),
    device_authorization_endpoint: Type.Optional(Type.String({ maxLength: 2048 })),
    token_endpoint: Type.Optional(Type.String({ maxLength: 2048 })),
    revocation_endpoint: Type.String({ maxLength: 2048 }),
    introspection_endpoint: Type.String({ maxLength: 2048 }),
    jwks_uri: Type.String({ maxLength: 2048 }),
    grant_types_supported: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 10 }),
    response_types_supported: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 10 }),
    token_endpoint_auth_methods_supported: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 10 }),
    revocation_endpoint_auth_methods_supported: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 10 }),
    scopes_supported: Type.Array(Type.String({ maxLength: 200 }), { maxItems: 10_000 }),
    service_documentation: Type.String({ maxLength: 2048 }),
  },
  { additionalProperties: false },
);

/** Replaces the problem answers of a status with the OAuth error object (contract §13.5). */
function oauthErrors<T extends { schema: { response: object } }>(op: T, statuses: Record<number, string>): T {
  const response: Record<string, unknown> = { ...op.schema.response };
  const before = op.schema.response as Record<string, { headers?: object }>;
  for (const [status, description] of Object.entries(statuses)) response[status] = { ...oauthErrorResponse(description), headers: (status === '429' ? before['429'] : before['400'])?.headers };
  return { ...op, schema: { ...op.schema, response } };
}

/** `GET /.well-known/oauth-authorization-server` (RFC 8414); the metadata stays when the device flow is off. */
export function metadataRoute(app: Http, device: DeviceParts, catalogue: ScopeCatalogue): void {
  app.get('/.well-known/oauth-authorization-server', {
    ...operation({
      method: 'GET',
      operationId: 'getAuthorizationServerMetadata',
      tags: ['oauth'],
      summary: 'OAuth authorization server metadata (RFC 8414)',
      description: '`issuer` is PUBLIC_URL exactly; 404 when PUBLIC_URL is unset. Without the device flow (DEVICE_FLOW_ENABLED=false) the device endpoints and grant are left out. `Cache-Control: public, max-age=300`.',
      auth: 'public',
      rateLimit: 'address',
      success: { 200: { description: 'The metadata.', schema: Metadata } },
    }),
    handler: async (_request, reply) => {
      const { publicUrl, enabled } = device.config;
      if (!publicUrl) throw notFound();
      const link = (path: string) => publicLink(publicUrl, path);
      reply.header('cache-control', 'public, max-age=300');
      return {
        // PUBLIC_URL as configured, without the slash its parsing adds (RFC 8414 §3.3).
        issuer: publicUrl.toString().replace(/\/$/, ''),
        ...(enabled ? { device_authorization_endpoint: link('oauth/device_authorization'), token_endpoint: link('oauth/token') } : {}),
        revocation_endpoint: link('oauth/revoke'),
        introspection_endpoint: link('api/introspect'),
        jwks_uri: link('.well-known/jwks.json'),
        grant_types_supported: enabled ? [DEVICE_GRANT] : [],
        response_types_supported: [],
        token_endpoint_auth_methods_supported: ['none'],
        revocation_endpoint_auth_methods_supported: ['none'],
        scopes_supported: [...catalogue.allowed('api_token')],
        service_documentation: link('docs'),
      };
    },
  });
}

/** The three OAuth endpoints, registered inside the context of registerOAuthHttp (oauth-http.ts). */
export function oauthRoutes(app: Http, device: DeviceParts): void {
  const enabled = () => {
    if (!device.config.enabled) throw notFound();
  };
  app.post('/oauth/device_authorization', oauthErrors(
    operation({
      method: 'POST',
      operationId: 'requestDeviceAuthorization',
      tags: ['oauth'],
      summary: 'Start a device login (RFC 8628 §3.1)',
      description: `No authentication. Answers a device code to poll with and a user code for the person to approve on the device page. ${BODIES} At most 10 per minute per address (policy \`device-authorization\`) and DEVICE_MAX_PENDING_PER_IP pending per address (429). ${NO_STORE}`,
      auth: 'public',
      rateLimit: 'device-authorization',
      body: AuthorizationBody,
      consumes: FORM,
      problems: ['not_found'],
      success: { 200: { description: 'The codes.', schema: Authorization } },
    }),
    { 400: '`invalid_request` or `invalid_scope` (nothing stored).', 401: '`invalid_client`: unknown or disabled client.', 429: '`rate_limited`.' },
  ), async (request) => {
    enabled();
    const context = contextOf(request);
    return device.flow.authorize(request.body, { ...context, address: context.address ?? '' });
  });

  app.post('/oauth/token', oauthErrors(
    operation({
      method: 'POST',
      operationId: 'issueDeviceToken',
      tags: ['oauth'],
      summary: 'Poll for the token of a device login (RFC 8628 §3.4)',
      description: `\`authorization_pending\` until approved, \`slow_down\` (and a 5 s longer interval for good) when polled sooner than \`interval\`, \`access_denied\` once after a denial, \`expired_token\`, \`invalid_grant\` (the same bytes for an unknown, another client's or a used code). The first poll after approval gets the API token; every later one \`invalid_grant\`. ${BODIES} Limited per address (policy \`device-token\`, 429 whatever the code's state). ${NO_STORE}`,
      auth: 'public',
      rateLimit: 'device-token',
      body: TokenBody,
      consumes: FORM,
      problems: ['not_found'],
      success: { 200: { description: 'The API token.', schema: IssuedToken } },
    }),
    { 400: 'An RFC 6749 §5.2 / RFC 8628 §3.5 error.', 429: '`rate_limited`.' },
  ), async (request) => {
    enabled();
    return device.flow.poll(request.body, contextOf(request));
  });

  app.post('/oauth/revoke', oauthErrors(
    operation({
      method: 'POST',
      operationId: 'revokeOwnToken',
      tags: ['oauth'],
      summary: 'Revoke a token with its own value (RFC 7009)',
      description: `An API or app token value revokes itself: holding it is the proof. Always \`200 {}\`, whether or not anything was revoked (RFC 7009 §2.2); a missing \`token\` is \`invalid_request\`. ${BODIES} Limited per address (policy \`oauth-revoke\`). ${NO_STORE}`,
      auth: 'public',
      rateLimit: 'oauth-revoke',
      body: RevokeBody,
      consumes: FORM,
      success: { 200: { description: 'Done, or nothing to do.', schema: Type.Object({}, { additionalProperties: false }) } },
    }),
    { 400: '`invalid_request`.', 429: '`rate_limited`.' },
  ), async (request) => {
    if (request.body.token === undefined) throw invalidRequest('token is required.');
    await device.revocation.revoke(request.body.token, contextOf(request));
    return {};
  });
}
