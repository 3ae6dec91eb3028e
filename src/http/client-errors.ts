import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { ProblemError } from '../errors.js';
import { requestId } from '../lib/ids.js';
import { SECURITY_HEADERS } from './headers.js';
import { logRefusedRequest } from './logging.js';
import { problemBody } from './problem.js';

function clientProblem(code: string | undefined): ProblemError {
  if (code === 'HPE_HEADER_OVERFLOW') return new ProblemError('headers_too_large');
  // Node's requestTimeout (set in app.ts) ran out before the request arrived whole.
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new ProblemError('request_timeout');
  return new ProblemError('validation_failed', { detail: 'The request is not valid HTTP.', errors: [{ field: 'request', message: 'is not valid HTTP' }] });
}

/** The headers every answer carries, as response header lines. */
const SECURITY_HEADER_LINES = Object.entries(SECURITY_HEADERS).map(([name, value]) => `${name}: ${value}`);

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (oversized headers, malformed
 * request lines) still get a problem+json body, every header the others get and their access line
 * (the log's one line per request: the request id is quoted back to us), then the connection
 * closes. Fastify calls it bound to the app, whose logger it writes to.
 */
export function clientErrorHandler(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
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
      ...SECURITY_HEADER_LINES,
      `x-request-id: ${id}`,
      `content-length: ${Buffer.byteLength(body)}`,
      'connection: close',
      '',
      body,
    ].join('\r\n'),
  );
  logRefusedRequest(this.log, { id, status: problem.status, remote: socket.remoteAddress ?? '', clientError: error.code ?? error.name });
}
