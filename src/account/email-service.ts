import type { RequestContext } from '../audit/events.js';
import type { Principal } from '../auth/principal.js';
import { notFound } from '../errors.js';

/** Verification, password reset and email change (contract §11.4, docs/email.md). */
export interface EmailFlows {
  requestVerification(principal: Principal, context: RequestContext): Promise<void>;
  confirmVerification(token: string, context: RequestContext): Promise<void>;
  requestPasswordReset(email: string, context: RequestContext): Promise<void>;
  confirmPasswordReset(token: string, newPassword: string, context: RequestContext): Promise<void>;
  requestEmailChange(principal: Principal, email: string, password: string, context: RequestContext): Promise<void>;
  confirmEmailChange(token: string, context: RequestContext): Promise<void>;
}

/** Mail off (no SMTP_URL): every flow answers 404, as if its route did not exist. */
export const MAIL_OFF: EmailFlows = {
  requestVerification: () => Promise.reject(notFound()),
  confirmVerification: () => Promise.reject(notFound()),
  requestPasswordReset: () => Promise.reject(notFound()),
  confirmPasswordReset: () => Promise.reject(notFound()),
  requestEmailChange: () => Promise.reject(notFound()),
  confirmEmailChange: () => Promise.reject(notFound()),
};
