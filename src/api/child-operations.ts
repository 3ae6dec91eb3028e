/**
 * The only operations a derived child (`rzd_`) may call on rz-auth (contract §14.6), each still
 * subject to the child's effective scopes as its parent would be. Every other route answers a
 * child 403 insufficient_scope: children never mint, rotate, approve devices, manage webhooks or
 * touch the account.
 */
export const CHILD_OPERATIONS: ReadonlySet<string> = new Set(['getMe', 'listApps', 'getApp', 'listAppTokens', 'listApiTokens', 'getToken']);
