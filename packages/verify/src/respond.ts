import type { VerifyError } from './errors.js';

/** The body every adapter answers a refusal with. */
export const refusalBody = (error: VerifyError): string => JSON.stringify({ code: error.code, message: error.message });

/** The headers of a refusal: the challenge when there is one; never cached by a proxy. */
export function refusalHeaders(error: VerifyError): Record<string, string> {
  return {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    ...(error.wwwAuthenticate === undefined ? {} : { 'www-authenticate': error.wwwAuthenticate }),
    ...(error.retryAfter === undefined ? {} : { 'retry-after': String(error.retryAfter) }),
  };
}
