import { Type } from 'typebox';

/** A parameter's value; a JSON value of another type is refused as a form would never send it. */
export const OAuthParam = (description: string) => Type.Optional(Type.String({ maxLength: 16_384, description }));

/** The RFC 6749 §5.2 error object the OAuth endpoints answer with. */
export const OAuthErrorBody = Type.Object(
  {
    error: Type.String({ maxLength: 64, description: 'An RFC 6749 §5.2 / RFC 8628 §3.5 code, or `rate_limited`.', examples: ['authorization_pending'] }),
    error_description: Type.String({ maxLength: 500 }),
    request_id: Type.String({ maxLength: 64 }),
  },
  { additionalProperties: false, title: 'OAuth error' },
);

/** How the document shows an OAuth error status: JSON, not problem details. */
export const oauthErrorResponse = (description: string) => ({ description, content: { 'application/json': { schema: OAuthErrorBody } } });
