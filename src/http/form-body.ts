import type { FastifyInstance } from 'fastify';
import { PROBLEM_LIMITS } from '../errors.js';
import { redactQuoted } from '../lib/redact.js';
import { addBodyParser, badBody, FORBIDDEN_KEYS } from './json-body.js';
import { registerProblemHandler } from './problem.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** One name or value of a form, decoded; @throws validation_failed for a bad escape. */
export function decode(text: string): string {
  try {
    // `+` is a space in this encoding; escapes must be whole and spell UTF-8.
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    throw badBody('is not valid form encoding');
  }
}

/** A form body's text; @throws validation_failed unless it is UTF-8. */
export function formText(body: Buffer): string {
  try {
    return utf8.decode(body);
  } catch {
    throw badBody('is not valid UTF-8');
  }
}

/**
 * Parses an `application/x-www-form-urlencoded` body strictly: UTF-8 only, every escape valid,
 * every field with a value, and no field twice (URLSearchParams would silently keep both, replace
 * bad bytes and pass bad escapes through, and two readers could then disagree about the value).
 * One pass over the body, at most 16 KiB.
 */
export function parseFormBody(body: Buffer): Record<string, string> {
  const text = formText(body);
  const fields: Array<[string, string]> = [];
  const seen = new Set<string>();
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    if (eq === -1) throw badBody('has a field without a value');
    const name = decode(pair.slice(0, eq));
    if (FORBIDDEN_KEYS.has(name)) throw badBody(`must not contain the field "${name}"`);
    // The name is the client's text and may be a token: error bodies never echo one.
    if (seen.has(name)) throw badBody(`contains the field "${redactQuoted(name, PROBLEM_LIMITS.detail)}" more than once`);
    seen.add(name);
    fields.push([name, decode(pair.slice(eq + 1))]);
  }
  if (fields.length === 0) throw badBody('is empty; send the form fields');
  return Object.fromEntries(fields);
}

/**
 * Form bodies, for the routes registered in `app`'s context only (OAuth-style endpoints such as
 * introspection, whose clients send forms): every other route keeps answering forms with 415.
 */
export function registerFormBodyParser(app: FastifyInstance): void {
  addBodyParser(app, 'application/x-www-form-urlencoded', parseFormBody);
  registerProblemHandler(app, { mediaTypes: 'Send the body as a form (application/x-www-form-urlencoded) or as JSON (application/json).' });
}
