import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com). Receivers verify with any
 * Standard Webhooks library, so the byte layout here must stay exactly as the specification says.
 */

const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` + base64 of 24 random bytes (192 bits), shown once. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

/** The HMAC key: the base64-decoded part after `whsec_` (a secret without the prefix is used whole). */
function keyOf(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = Buffer.from(encoded, 'base64');
  // Buffer.from ignores bad characters; an empty key would sign with nothing secret at all.
  if (key.length === 0) throw new Error('webhook secret has no key material');
  return key;
}

/**
 * The `webhook-signature` header value: `v1,` + base64 HMAC-SHA256 over `${id}.${timestamp}.${body}`.
 * `body` must be the exact bytes sent; re-serialising the payload would break the signature.
 */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

export interface WebhookHeaders {
  readonly 'webhook-id': string;
  readonly 'webhook-timestamp': string;
  readonly 'webhook-signature': string;
  readonly 'content-type': 'application/json';
}

/**
 * The headers of one attempt. `now` is in milliseconds (a clock's `now()`); the timestamp is the
 * attempt's, not the delivery's, because receivers refuse timestamps more than 5 minutes away.
 */
export function webhookHeaders(secret: string, id: string, body: string, now: number): WebhookHeaders {
  const timestamp = Math.floor(now / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(secret, id, timestamp, body),
    'content-type': 'application/json',
  };
}
