/** An RFC 6749 §5.2 error answer of the OAuth endpoints: `{ error, error_description, request_id }`. */
export class OAuthError extends Error {
  constructor(
    readonly status: 400 | 401 | 429,
    readonly error: string,
    readonly description: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(description);
  }
}

export const invalidRequest = (description: string) => new OAuthError(400, 'invalid_request', description);
/** The same bytes whatever the reason (unknown code, another client's code, redeemed): nothing to probe. */
export const invalidGrant = () => new OAuthError(400, 'invalid_grant', 'The device code is invalid, expired or already used.');
