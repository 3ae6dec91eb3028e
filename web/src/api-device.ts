import type { Answer, RequestBody } from '../../types/api.js';
import { call } from './api.js';

/*
 * The approval API of the device flow (contract §13.6, docs/device-flow.md) as the /device screen
 * uses it. All three take the user token; none of them carries anything secret in a URL.
 */

/** A pending request as POST /api/device/lookup answers it; looking up changes nothing. */
export type DeviceRequest = Answer<'lookUpDeviceRequest'>;

export const lookupDevice = (jwt: string, body: RequestBody<'lookUpDeviceRequest'>): Promise<DeviceRequest> => call('post', '/api/device/lookup', jwt, { body });
/** 204; needs a recent login (step-up, `insufficient_user_authentication`). */
export const approveDevice = async (jwt: string, body: RequestBody<'approveDeviceRequest'>): Promise<void> => {
  await call('post', '/api/device/approve', jwt, { body });
};
export const denyDevice = async (jwt: string, body: RequestBody<'denyDeviceRequest'>): Promise<void> => {
  await call('post', '/api/device/deny', jwt, { body });
};
