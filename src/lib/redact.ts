/**
 * Token-shaped strings: API and app tokens (even with a bad checksum) and anything that looks like
 * a compact JWS. Logs must never hold a credential, even one a client put in a URL by mistake.
 */
const TOKEN_SHAPED = /\brza?_[0-9A-Za-z]{8,}|\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.?[A-Za-z0-9_-]*/g;

export const redactSecrets = (text: string): string => text.replace(TOKEN_SHAPED, '[REDACTED]');
