import { Type } from 'typebox';
import { contextOf } from '../api/context.js';
import { operation } from '../api/operation.js';
import { type Http, principalOf, USER_TOKEN_ONLY } from '../api/route.js';
import { IdParams, listPage, NullableTimestamp, PageQuery, Timestamp, Uuid } from '../api/schemas.js';
import { AUDIT_TYPES } from '../audit/events.js';
import { DEFAULT_CAPS } from '../lib/caps.js';
import { parsePage } from '../lib/pages.js';
import { MAX_WEBHOOK_URL_LENGTH } from './addresses.js';
import { TEST_EVENT_TYPE } from './dispatcher.js';
import { MAX_DESCRIPTION, MAX_PENDING_TESTS, WEBHOOK_EVENT_TYPES, type WebhookService } from './service.js';
import { deliveryJson, endpointJson } from './json.js';

const EventTypes = Type.Array(Type.Enum([...WEBHOOK_EVENT_TYPES]), {
  minItems: 1,
  maxItems: WEBHOOK_EVENT_TYPES.length,
  uniqueItems: true,
  description: 'The audit event types the endpoint receives (GET /api/webhooks/event-types), at least one.',
  examples: [['token.created', 'token.revoked', 'token.leaked', 'token.expiring']],
});

const Url = Type.String({ maxLength: MAX_WEBHOOK_URL_LENGTH, description: 'An http or https URL.', examples: ['https://hooks.example.com/rz-auth'] });

const CreateBody = Type.Object(
  {
    url: Type.String({
      maxLength: MAX_WEBHOOK_URL_LENGTH,
      description:
        'An http or https URL, without user name, password or fragment. Unless the server sets WEBHOOK_ALLOW_PRIVATE, a URL whose host is, or resolves to, a loopback, private, link-local or reserved address is refused.',
      examples: ['https://hooks.example.com/rz-auth'],
    }),
    event_types: EventTypes,
    description: Type.Optional(Type.String({ maxLength: 4 * MAX_DESCRIPTION, description: `Up to ${MAX_DESCRIPTION} characters.`, examples: ['Security alerts to our SIEM'] })),
  },
  { additionalProperties: false },
);

const Endpoint = Type.Object(
  {
    id: Uuid,
    url: Url,
    description: Type.Union([Type.String({ maxLength: MAX_DESCRIPTION }), Type.Null()]),
    event_types: EventTypes,
    created_at: Timestamp,
    paused: Type.Optional(
      Type.Object(
        {
          consecutive_failures: Type.Integer({ format: 'int32', minimum: 0, maximum: 2_147_483_647, description: 'Failed attempts in a row.' }),
          next_probe_at: Timestamp,
        },
        {
          additionalProperties: false,
          description: 'Present only while deliveries to the endpoint are paused after failed attempts in a row: one delivery is tried at `next_probe_at`, and a success resumes the rest.',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

const CreatedEndpoint = Type.Object(
  {
    ...Endpoint.properties,
    secret: Type.String({
      pattern: '^whsec_[A-Za-z0-9+/]{32}$',
      maxLength: 38,
      description: 'The signing secret (Standard Webhooks): `whsec_` + base64 of 24 random bytes. Shown only in this response: store it now.',
    }),
  },
  { additionalProperties: false },
);

const Attempt = Type.Object(
  {
    attempted_at: Timestamp,
    status_code: Type.Union([Type.Integer({ format: 'int32', minimum: 100, maximum: 999 }), Type.Null()], { description: 'The HTTP status answered; null when there was none.' }),
    error: Type.Union([Type.String({ maxLength: 200 }), Type.Null()], { description: 'Why there was no answer: a timeout, a refused address, a connection failure.' }),
    duration_ms: Type.Integer({ format: 'int32', minimum: 0, maximum: 3_600_000 }),
  },
  { additionalProperties: false },
);

const DeliverySchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', maxLength: 36, description: 'The `webhook-id` header: the same on every attempt.' }),
    event_id: Type.Union([Uuid, Type.Null()], { description: 'The audit event delivered; null for a test.' }),
    event_type: Type.Enum([...AUDIT_TYPES, TEST_EVENT_TYPE]),
    status: Type.Enum(['pending', 'succeeded', 'failed'], { description: 'pending until a 2xx answer (succeeded) or the last retry, a day after creation (failed).' }),
    created_at: Timestamp,
    next_attempt_at: NullableTimestamp,
    finished_at: NullableTimestamp,
    attempts: Type.Array(Attempt, { maxItems: 100, description: 'Oldest first.' }),
  },
  { additionalProperties: false },
);

const USER_ONLY = 'Needs a user token (API and app tokens get 403).';

/** /api/webhooks: a user's own endpoints, for their own events (docs/webhooks.md). */
export function webhookRoutes(app: Http, webhooks: WebhookService): void {
  const tags = ['webhooks'] as const;
  const owner = (request: Parameters<typeof principalOf>[0]) => principalOf(request).user.id;

  app.post('/api/webhooks', {
    ...operation({
      method: 'POST',
      operationId: 'createWebhook',
      tags,
      summary: 'Add a webhook endpoint for your own events',
      description: `${USER_ONLY} The answer carries the signing secret, once. At most MAX_WEBHOOKS_PER_USER endpoints per user (${DEFAULT_CAPS.webhooksPerUser} by default; 409 \`conflict\` naming it beyond). A bad \`url\`, \`event_types\` or \`description\` is 400 naming it. See docs/webhooks.md.`,
      auth: USER_TOKEN_ONLY,
      body: CreateBody,
      problems: ['conflict'],
      success: { 201: { description: 'Added. Store the secret now: it is never shown again.', schema: CreatedEndpoint } },
    }),
    handler: async (request, reply) => {
      const { url, event_types: eventTypes, description } = request.body;
      const { endpoint, secret } = await webhooks.create(owner(request), { url, eventTypes, description }, contextOf(request));
      return reply.code(201).header('cache-control', 'no-store').send({ ...endpointJson(endpoint), secret });
    },
  });

  app.get('/api/webhooks', {
    ...operation({
      method: 'GET',
      operationId: 'listWebhooks',
      tags,
      summary: 'List your webhook endpoints, newest first',
      description: `${USER_ONLY} A page at a time. Never returns a secret. A bad \`limit\` or \`cursor\` is 400 naming it.`,
      auth: USER_TOKEN_ONLY,
      querystring: PageQuery,
      success: { 200: { description: 'A page of your endpoints.', schema: listPage('webhooks', Endpoint, 'Your endpoints.') } },
    }),
    handler: async (request) => {
      const listed = await webhooks.page(owner(request), parsePage(request.query));
      return { webhooks: listed.items.map(endpointJson), next_cursor: listed.nextCursor };
    },
  });

  app.get('/api/webhooks/event-types', {
    ...operation({
      method: 'GET',
      operationId: 'listWebhookEventTypes',
      tags,
      summary: 'List the event types an endpoint may receive',
      description: `${USER_ONLY} Every type of the audit log (docs/audit-log.md).`,
      auth: USER_TOKEN_ONLY,
      success: { 200: { description: 'The event types.', schema: Type.Object({ event_types: EventTypes }, { additionalProperties: false }) } },
    }),
    handler: async () => ({ event_types: [...WEBHOOK_EVENT_TYPES] }),
  });

  app.get('/api/webhooks/:id', {
    ...operation({
      method: 'GET',
      operationId: 'getWebhook',
      tags,
      summary: 'Read one of your webhook endpoints',
      description: `${USER_ONLY} Someone else's endpoint is 404, like one that does not exist.`,
      auth: USER_TOKEN_ONLY,
      params: IdParams,
      success: { 200: { description: 'The endpoint, without its secret.', schema: Endpoint } },
    }),
    handler: async (request) => endpointJson(await webhooks.get(owner(request), request.params.id)),
  });

  app.delete('/api/webhooks/:id', {
    ...operation({
      method: 'DELETE',
      operationId: 'deleteWebhook',
      tags,
      summary: 'Delete a webhook endpoint and its deliveries',
      description: `${USER_ONLY} Deliveries not yet made are dropped with it.`,
      auth: USER_TOKEN_ONLY,
      params: IdParams,
      success: { 204: { description: 'Deleted.' } },
    }),
    handler: async (request, reply) => {
      await webhooks.delete(owner(request), request.params.id, contextOf(request));
      return reply.code(204).send(null);
    },
  });

  app.get('/api/webhooks/:id/deliveries', {
    ...operation({
      method: 'GET',
      operationId: 'listWebhookDeliveries',
      tags,
      summary: "List an endpoint's deliveries with their attempts, newest first",
      description: `${USER_ONLY} Page with \`next_cursor\`; it is null on the last page. Finished deliveries are kept 30 days.`,
      auth: USER_TOKEN_ONLY,
      params: IdParams,
      querystring: PageQuery,
      success: { 200: { description: 'A page of deliveries.', schema: listPage('deliveries', DeliverySchema, "The endpoint's deliveries.") } },
    }),
    handler: async (request) => {
      const page = await webhooks.deliveries(owner(request), request.params.id, request.query);
      return { deliveries: page.deliveries.map(deliveryJson), next_cursor: page.nextCursor };
    },
  });

  app.post('/api/webhooks/:id/test', {
    ...operation({
      method: 'POST',
      operationId: 'sendWebhookTest',
      tags,
      summary: 'Send a test delivery to an endpoint',
      description: `${USER_ONLY} Queues a \`${TEST_EVENT_TYPE}\` delivery, sent within seconds and retried like any other; follow it in the deliveries list. At most ${MAX_PENDING_TESTS} test deliveries per endpoint may be pending at once (409 \`conflict\` beyond).`,
      auth: USER_TOKEN_ONLY,
      params: IdParams,
      problems: ['conflict'],
      success: { 202: { description: 'Queued.', schema: Type.Object({ delivery: DeliverySchema }, { additionalProperties: false }) } },
    }),
    handler: async (request, reply) => reply.code(202).send({ delivery: deliveryJson(await webhooks.test(owner(request), request.params.id)) }),
  });
}
