/** RFC 8176 authentication method references rz-auth writes in user tokens (contract §12.4). */
export const AUTH_METHODS = ['pwd', 'otp', 'hwk', 'swk', 'user', 'mfa'] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];

/** How a session's user authenticated. */
export interface Authentication {
  readonly amr: readonly AuthMethod[];
  /** Milliseconds since the epoch: the last primary or step-up authentication. */
  readonly authTime: number;
}

export const isAuthMethods = (value: unknown): value is AuthMethod[] =>
  Array.isArray(value) && value.length > 0 && value.length <= AUTH_METHODS.length && value.every((m) => (AUTH_METHODS as readonly unknown[]).includes(m));

/** A session's stored `amr` (space-separated): a password login for sessions from before the column. */
export const parseAmr = (stored: string | null): AuthMethod[] => {
  const methods = stored === null ? [] : stored.split(' ');
  return isAuthMethods(methods) ? methods : ['pwd'];
};
