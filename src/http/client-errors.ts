import type { Socket } from 'node:net';
import { ProblemError } from '../errors.js';
import { requestId } from '../lib/ids.js';
import { STATUS_CODES } from 'node:http';
import { problemBody } from './problem.js';

function clientProblem(code: string | undefined): ProblemError {
  if (code === 'HPE_HEADER_OVERFLOW') return new ProblemError('headers_too_large');
  // Node's requestTimeout (set in app.ts) ran out before the request arrived whole.
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new ProblemError('request_timeout');
  return new ProblemError('validation_failed', { detail: 'The request is not valid HTTP.', errors: [{ field: 'request', message: 'is not valid HTTP' }] });
}

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (oversized headers, malformed
 * request lines) still get a problem+json body and the usual headers, then the connection closes.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const problem = clientProblem(error.code);
  const id = requestId();
  const body = JSON.stringify(problemBody(problem, id));
  socket.end(
    [
      `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? ''}`,
      'content-type: application/problem+json',
      'x-content-type-options: nosniff',
      'cache-control: no-store',
      `x-request-id: ${id}`,
      `content-length: ${Buffer.byteLength(body)}`,
      'connection: close',
      '',
      body,
    ].join('\r\n'),
  );
}
