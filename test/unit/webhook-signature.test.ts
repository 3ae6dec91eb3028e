import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, signWebhook, webhookHeaders } from '../../src/webhooks/signature.js';

// standardwebhooks is an independent implementation of the same specification: if it accepts our
// signatures, any receiver's library will.
describe('webhook signatures (Standard Webhooks)', () => {
  const body = '{"type":"token.created","timestamp":"2026-11-21T09:30:00.000Z","data":{"a":"é ✓"}}';
  const id = 'a7f3c0de-1b2c-4d5e-8f90-123456789abc';

  it('a new secret is whsec_ + base64 of 24 random bytes, different each time', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(24);
    expect(newWebhookSecret()).not.toBe(secret);
  });

  it('headers built now verify with the standardwebhooks package and carry the payload unchanged', () => {
    const secret = newWebhookSecret();
    const headers = webhookHeaders(secret, id, body, Date.now());
    expect(headers['content-type']).toBe('application/json');
    expect(headers['webhook-id']).toBe(id);
    expect(headers['webhook-timestamp']).toMatch(/^\d{10}$/);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });

  it('matches the library signature byte for byte for a fixed timestamp', () => {
    const secret = newWebhookSecret();
    const seconds = 1_763_717_400;
    expect(signWebhook(secret, id, seconds, body)).toBe(new Webhook(secret).sign(id, new Date(seconds * 1000), body));
  });

  it('the timestamp is whole seconds of the attempt time', () => {
    const headers = webhookHeaders(newWebhookSecret(), id, body, 1_763_717_400_999);
    expect(headers['webhook-timestamp']).toBe('1763717400');
  });

  it('the library refuses a changed body, id, timestamp or secret (the check can fail)', () => {
    const secret = newWebhookSecret();
    const headers = { ...webhookHeaders(secret, id, body, Date.now()) };
    const verify = (s: string, b: string, h: Record<string, string>) => () => new Webhook(s).verify(b, h);
    expect(verify(secret, body, headers)).not.toThrow();
    expect(verify(secret, body.replace('created', 'revoked'), headers)).toThrow(WebhookVerificationError);
    expect(verify(secret, body, { ...headers, 'webhook-id': `${id}x` })).toThrow(WebhookVerificationError);
    const later = String(Number(headers['webhook-timestamp']) + 1);
    expect(verify(secret, body, { ...headers, 'webhook-timestamp': later })).toThrow(WebhookVerificationError);
    expect(verify(newWebhookSecret(), body, headers)).toThrow(WebhookVerificationError);
  });

  it('refuses a secret without key material rather than signing with an empty key', () => {
    expect(() => signWebhook('whsec_', id, 1, body)).toThrow(/key material/);
  });
});
