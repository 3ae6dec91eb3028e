import type { Socket } from 'node:net';
import { ProblemError } from '../errors.js';
import { requestId } from '../lib/ids.js';
import { STATUS_CODES } from 'node:http';
import { problemBody } from './problem.js';

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (oversized headers, malformed
 * request lines) still get a problem+json body and the usual headers, then the connection closes.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const problem = new ProblemError(error.code === 'HPE_HEADER_OVERFLOW' ? 'headers_too_large' : 'validation_failed', {
    detail: error.code === 'HPE_HEADER_OVERFLOW' ? undefined : 'The request is not valid HTTP.',
  });
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
