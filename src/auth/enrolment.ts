/**
 * The routes a user token with the enrolment audience may call (contract §12.7): who am I, log
 * out, and the second-factor routes under /api/me/mfa, where the user adds the missing factor.
 * Every other protected route answers it 403 `mfa_enrollment_required`.
 */
export function isEnrolmentRoute(method: string | readonly string[], url: string): boolean {
  const methods = typeof method === 'string' ? [method] : method;
  if (url === '/api/me') return methods.every((m) => m === 'GET' || m === 'HEAD');
  if (url === '/api/auth/logout') return methods.every((m) => m === 'POST');
  return url === '/api/me/mfa' || url.startsWith('/api/me/mfa/');
}
