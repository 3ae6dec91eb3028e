import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { invalidRequest, OAuthError } from '../oauth/errors.js';
import { decode, formText } from './form-body.js';
import { addBodyParser, parseJsonBody } from './json-body.js';
import { sendProblem, toProblem } from './problem.js';

/**
 * An `application/x-www-form-urlencoded` body as RFC 6749 §3.1 reads it, unlike the house parser
 * (http/form-body.ts): a parameter without a value is omitted and an unknown one dropped (each in
 * the one pass), but one given twice is `invalid_request` (two readers could disagree on it).
 */
export function parseOAuthForm(body: Buffer): Record<string, string> {
  const text = formText(body);
  const seen = new Set<string>();
  const fields: Array<[string, string]> = [];
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decode(eq === -1 ? pair : pair.slice(0, eq));
    // The name is the client's text and may be a credential: never echoed.
    if (seen.has(name)) throw invalidRequest('A parameter was given more than once.');
    seen.add(name);
    const value = eq === -1 ? '' : decode(pair.slice(eq + 1));
    if (value !== '' && KNOWN.has(name)) fields.push([name, value]);
  }
  return Object.fromEntries(fields);
}

/** The parameters the three endpoints read; any other is ignored, whatever its type. */
const KNOWN = new Set(['client_id', 'scope', 'device_name', 'grant_type', 'device_code', 'token', 'token_type_hint']);

/** A JSON body with the same fields: strings, an empty one (or null) omitted as in a form. */
function parseOAuthJson(body: Buffer): Record<string, string> {
  let value: unknown;
  try {
    value = parseJsonBody(body);
  } catch {
    throw invalidRequest('The body is not a valid JSON object.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidRequest('The body must be a JSON object of parameters.');
  const fields: Array<[string, string]> = [];
  for (const [name, field] of Object.entries(value)) {
    if (!KNOWN.has(name) || field === null || field === '') continue;
    if (typeof field !== 'string') throw invalidRequest('Each parameter must be a string.');
    fields.push([name, field]);
  }
  return Object.fromEntries(fields);
}

export function sendOAuthError(request: FastifyRequest, reply: FastifyReply, error: OAuthError): FastifyReply {
  request.problemCode = error.error;
  return reply
    .code(error.status)
    .headers(error.headers)
    .type('application/json')
    .serializer(JSON.stringify)
    .send({ error: error.error, error_description: error.description, request_id: request.id });
}

/**
 * The OAuth endpoints' context (contract §13.5): form and JSON bodies as RFC 6749 reads them,
 * errors as OAuth objects, and `Cache-Control: no-store` with `Pragma: no-cache` on every answer.
 * A body never parsed (too large, another media type) stays a problem, as everywhere else.
 */
export function registerOAuthHttp(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  addBodyParser(app, 'application/x-www-form-urlencoded', parseOAuthForm);
  addBodyParser(app, 'application/json', parseOAuthJson);
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    reply.header('pragma', 'no-cache');
  });
  app.setErrorHandler((error, request, reply) => {
    if (error instanceof OAuthError) return sendOAuthError(request, reply, error);
    const problem = toProblem(error);
    if (problem.code === 'rate_limited') return sendOAuthError(request, reply, new OAuthError(429, 'rate_limited', problem.detail, problem.headers));
    if (problem.code === 'validation_failed') return sendOAuthError(request, reply, invalidRequest('The body is not valid: send form-encoded UTF-8, or a JSON object, of string parameters.'));
    if (problem.status >= 500) request.log.error({ err: error }, 'request failed');
    return sendProblem(request, reply, problem);
  });
}
