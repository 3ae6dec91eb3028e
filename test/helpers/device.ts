import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { TestApp } from './app.js';
import { json } from './api.js';

export const DEVICE_ENV = { PUBLIC_URL: 'http://localhost:3000' } as const;
export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** A form POST, as OAuth clients send it. */
export function form(t: TestApp, url: string, body: string | Record<string, string>, remoteAddress?: string): Promise<LightMyRequestResponse> {
  const payload = typeof body === 'string' ? body : new URLSearchParams(body).toString();
  return t.inject({ method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload, ...(remoteAddress ? { remoteAddress } : {}) });
}

export interface DeviceCodes {
  readonly device_code: string;
  readonly user_code: string;
  readonly verification_uri: string;
  readonly verification_uri_complete: string;
  readonly expires_in: number;
  readonly interval: number;
}

export async function requestDevice(t: TestApp, fields: Record<string, string> = {}, remoteAddress?: string): Promise<DeviceCodes> {
  const res = await form(t, '/oauth/device_authorization', { client_id: 'rz-cli', ...fields }, remoteAddress);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as DeviceCodes;
}

export const poll = (t: TestApp, deviceCode: string, clientId = 'rz-cli', remoteAddress?: string) =>
  form(t, '/oauth/token', { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId }, remoteAddress);

export async function approve(t: TestApp, jwt: string, userCode: string, extra: Record<string, unknown> = {}): Promise<void> {
  const res = await json(t, 'POST', '/api/device/approve', { user_code: userCode, ...extra }, jwt);
  expect(res.statusCode, res.body).toBe(204);
}
