import type { FastifyInstance } from 'fastify';
import { PROBLEM_LIMITS, ProblemError, validationFailed } from '../errors.js';
import { redactQuoted } from '../lib/redact.js';
import { countHeader } from './framing.js';
import { isMediaType } from './media-type.js';

export const BODY_LIMIT = 16 * 1024;
const MAX_DEPTH = 32;
/** Keys that could reach an object's prototype if the body were ever merged into another object. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
const utf8 = new TextDecoder('utf-8', { fatal: true });
/** With the `u` flag this matches only unpaired surrogates: a pair is read as one code point. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/** A 400 naming the whole body, for a body that cannot be read at all. */
export const badBody = (message: string) => validationFailed([{ field: 'body', message }], `The request body ${message}.`);

/**
 * Walks already-valid JSON text and rejects duplicate keys, prototype keys, deep nesting and
 * strings that are not valid Unicode. JSON.parse silently keeps the last duplicate, and two parsers
 * disagreeing about which value counts is how checks get bypassed, so duplicates are an error here.
 */
function checkStructure(text: string): void {
  const stack: Array<Set<string> | null> = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{' || c === '[') {
      stack.push(c === '{' ? new Set() : null);
      if (stack.length > MAX_DEPTH) throw badBody(`nests deeper than ${MAX_DEPTH} levels`);
      expectKey = c === '{';
    } else if (c === '}' || c === ']') {
      stack.pop();
      expectKey = false;
    } else if (c === ',') {
      expectKey = stack.at(-1) instanceof Set;
    } else if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const raw = text.slice(i, end + 1);
      // The text is valid UTF-8, so only a \u escape can spell a lone surrogate ("\ud800"), which
      // no UTF-8 store can hold: the stored value would differ from the one that was checked.
      if (raw.includes('\\u') && LONE_SURROGATE.test(JSON.parse(raw) as string)) {
        throw badBody('contains a string that is not valid Unicode');
      }
      if (expectKey) {
        const key = JSON.parse(raw) as string;
        const keys = stack.at(-1) as Set<string>;
        if (FORBIDDEN_KEYS.has(key)) throw badBody(`must not contain the key "${key}"`);
        // The key is the client's text and may be a token: error bodies never echo one.
        if (keys.has(key)) throw badBody(`contains the key "${redactQuoted(key, PROBLEM_LIMITS.detail)}" more than once`);
        keys.add(key);
        expectKey = false;
      }
      i = end;
    }
  }
}

/** Parses a JSON body: strict UTF-8, valid JSON, then the structural checks above. */
export function parseJsonBody(body: Buffer): unknown {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw badBody('is not valid UTF-8');
  }
  if (text.trim() === '') throw badBody('is empty; send a JSON object');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // The parser's own message is not passed on: it can echo input and says nothing useful.
    throw badBody('is not valid JSON');
  }
  checkStructure(text);
  return value;
}

/**
 * A parser for one media type: at most {@link BODY_LIMIT} bytes, one Content-Type that is
 * `mediaType` (case-insensitive, any parameters; a charset other than UTF-8 is refused), and no
 * content coding.
 */
export function addBodyParser(app: FastifyInstance, mediaType: string, parse: (body: Buffer) => unknown): void {
  app.addContentTypeParser(mediaType, { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (request, body, done) => {
    // Two Content-Type headers: Node reads the first, a proxy in front may have checked the last.
    if (countHeader(request.raw.rawHeaders, 'content-type') > 1 || !isMediaType(request.headers['content-type'] ?? '', mediaType)) {
      done(new ProblemError('unsupported_media_type'), undefined);
      return;
    }
    // A coded body (gzip, br...) is never decoded here, and reading its bytes as if they were plain
    // would check another body than the one a proxy or the client means.
    const coding = request.headers['content-encoding'];
    if (coding !== undefined && coding.trim().toLowerCase() !== 'identity') {
      done(new ProblemError('unsupported_media_type', { detail: 'Content-Encoding is not supported: send the body uncompressed.' }), undefined);
      return;
    }
    if (request.routeOptions.config.keepRawBody) request.rawBody = body as Buffer;
    try {
      done(null, parse(body as Buffer));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}

/**
 * JSON is the only body type: Fastify's text/plain parser is removed, so form posts and CORS-simple
 * text/plain requests get 415 and never reach a handler.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  app.decorateRequest('rawBody', null);
  app.removeAllContentTypeParsers();
  addBodyParser(app, 'application/json', parseJsonBody);
}
