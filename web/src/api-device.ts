import { send } from './api.js';

/*
 * The approval API of the device flow (contract §13.6, docs/api-clients.md) as the /device screen
 * uses it. Its routes are not in the OpenAPI document yet, so these shapes are the contract's JSON
 * written out by hand, in this one module; once the routes are in the document they become the
 * generated types (types/openapi.d.ts) and these calls go through `call` like api.ts. All three take
 * the user token; none of them carries anything secret in a URL.
 */

/** A pending request as POST /api/device/lookup answers it; looking up changes nothing. */
export interface DeviceRequest {
  readonly user_code: string;
  readonly client: { readonly id: string; readonly name: string };
  /** Whatever the device said its name is: shown as text, never trusted. */
  readonly device_name: string;
  readonly device_name_verified: boolean;
  readonly scopes: readonly { readonly name: string; readonly description: string }[];
  readonly requested_at: string;
  readonly expires_at: string;
  readonly requester: { readonly ip: string; readonly user_agent: string };
  /** Whether the request came from the caller's network (same /24 or /56). */
  readonly same_network: boolean;
}

export interface DeviceLookupBody {
  readonly user_code: string;
}

/** `scopes` a subset of those requested (omitted: all); `expires_in_days` 1 to DEVICE_TOKEN_MAX_DAYS. */
export interface DeviceApproveBody {
  readonly user_code: string;
  readonly scopes?: readonly string[];
  readonly expires_in_days?: number;
  readonly name?: string;
}

export interface DeviceDenyBody {
  readonly user_code: string;
}

export const lookupDevice = async (jwt: string, body: DeviceLookupBody): Promise<DeviceRequest> => (await send('POST', '/api/device/lookup', jwt, body)) as DeviceRequest;
/** 204; needs a recent login (step-up, `insufficient_user_authentication`). */
export const approveDevice = async (jwt: string, body: DeviceApproveBody): Promise<void> => {
  await send('POST', '/api/device/approve', jwt, body);
};
export const denyDevice = async (jwt: string, body: DeviceDenyBody): Promise<void> => {
  await send('POST', '/api/device/deny', jwt, body);
};
