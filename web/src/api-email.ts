import type { Answer } from '../../types/api.js';
import { call } from './api.js';

/*
 * The account-by-email side of the API (contract §11.4) as the page uses it. Link tokens come from
 * the URL fragment of a mail's link and travel only in a POST body, never in a URL.
 */

/** The caller as GET /api/me describes it; for a user token, with `email_verified`. */
export type Me = Answer<'getMe'>;

/**
 * Whether this server sends mail. The service writes it into the page it serves
 * (src/web/routes.ts); with mail off every route below answers 404, so the page offers none of them.
 */
export const mailOn = (): boolean => document.querySelector('meta[name="rz-auth-mail"]')?.getAttribute('content') === 'on';

export const getMe = (jwt: string) => call('get', '/api/me', jwt, {});

/** Always 202 with the same body, whether or not an account uses the address. */
export const requestPasswordReset = (email: string) => call('post', '/api/auth/password-reset', null, { body: { email } });
export const resetPassword = (token: string, newPassword: string) => call('post', '/api/auth/password-reset/confirm', null, { body: { token, new_password: newPassword } });

/** A new verification link to the user's address; the previous one dies. */
export const sendVerification = (jwt: string) => call('post', '/api/auth/verify-email', jwt, {});
export const verifyEmail = (token: string) => call('post', '/api/auth/verify-email/confirm', null, { body: { token } });

/** A confirmation link to the new address; nothing changes until it is used. */
export const changeEmail = (jwt: string, email: string, password: string) => call('post', '/api/me/email', jwt, { body: { email, password } });
export const confirmEmailChange = (token: string) => call('post', '/api/me/email/confirm', null, { body: { token } });
