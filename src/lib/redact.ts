import { withoutInvisible } from './text.js';

/**
 * Token-shaped strings, wherever they stand (no `\b`: a percent-encoded space or quote before a
 * token is a letter or digit), in any letter case: API, app and service tokens, even with a bad
 * checksum, webhook signing secrets (`whsec_`), and anything that starts like a JWT. Logs must never
 * hold a credential, even one a client put in a URL by mistake. Linear on any input: the JWT
 * alternative can always end where its run of base64url characters ends (the dots are optional),
 * so a match never fails after a long scan and no start position is scanned twice.
 */
const TOKEN_SHAPED = /rz[as]?_[0-9a-z]{8,}|whsec_[0-9a-z+/]*|eyJ[a-z0-9_-]*(?:\.[a-z0-9_-]*){0,2}/gi;
/**
 * A run of 40 or more letters and digits: a token without its public prefix, which is the whole
 * secret. Looked for in text a client sent only, not on every line: every run of letters is a
 * candidate, so it costs far more than the pattern above. Tried only where a run starts, so linear.
 */
const BARE_TOKEN = /(?<![0-9A-Za-z])[0-9A-Za-z]{40,}/g;
export const REDACTED = '[REDACTED]';

/**
 * Token shapes replaced, nothing else touched: safe on text whose syntax must survive, such as a
 * serialized JSON log line (the replacement holds no quote or backslash).
 */
export const redactShapes = (text: string): string => text.replace(TOKEN_SHAPED, REDACTED);

/** Token shapes and bare token bodies replaced: for text a client sent. */
const redactClientText = (text: string): string => redactShapes(text).replace(BARE_TOKEN, REDACTED);

const PERCENT_ESCAPE = /%[0-9A-Fa-f]{2}/;
const PERCENT_ESCAPES = /(?:%[0-9A-Fa-f]{2})+/g;
/** Enough for a value encoded twice over and then some; each pass is linear. */
const MAX_DECODES = 4;

/**
 * One round of percent-decoding that never throws: each run of escapes is decoded as UTF-8, bytes
 * that are not UTF-8 becoming U+FFFD. No exception per bad run: a URL made of thousands of them
 * (`%ffx%ffx…`) cost decodeURIComponent's throw and catch each, tens of milliseconds a request.
 */
function decodeOnce(text: string): string {
  return text.replace(PERCENT_ESCAPES, (run) => Buffer.from(run.replaceAll('%', ''), 'hex').toString('utf8'));
}

/** `text` percent-decoded up to {@link MAX_DECODES} times over; null when it is still encoded after that. */
function percentDecoded(text: string): string | null {
  let decoded = text;
  for (let i = 0; i < MAX_DECODES && PERCENT_ESCAPE.test(decoded); i++) decoded = decodeOnce(decoded);
  return PERCENT_ESCAPE.test(decoded) ? null : decoded;
}

/**
 * Text as logs and error bodies may show it (a URL, a message, a field name a client sent), with
 * every token shape and bare token body redacted. Percent-encoding can hide a token from the
 * patterns (`%72z_…`, `rz%5F…`, `eyJ…%2E…`), so text with escapes is decoded, up to a few times
 * over; if the decoded text (invisible characters removed) holds a token, that text is returned
 * with it redacted, otherwise the text as it came. Text still encoded after that is replaced
 * whole: no client encodes a URL five times over except to hide something.
 */
export function redactSecrets(text: string): string {
  if (!PERCENT_ESCAPE.test(text)) return redactClientText(text);
  const decoded = percentDecoded(text);
  if (decoded === null) return REDACTED;
  // An escaped control or invisible character (`rz_ab%00cd…`, `%E2%80%8B`) splits a token for the
  // pattern but not for a reader: the decoded text is looked at without them.
  const bare = withoutInvisible(decoded);
  const redacted = redactClientText(bare);
  return redacted === bare ? redactClientText(text) : redacted;
}

/**
 * A character that may stand inside a secret as a client writes it: a letter, a digit, `_` or
 * `%` (an opaque token, its body alone, or either percent-encoded), a control or any non-ASCII
 * character (removed before redaction, they would join the halves of a token). JWTs and webhook
 * secrets hold more (`- . + /`), but they are recognised by their first characters alone.
 */
const IN_RUN = /[0-9A-Za-z_%\u0000-\u001f\u007f-\uffff]/;

/**
 * How much of `text` to keep so that at most `max` characters are kept and no secret is cut in
 * two: the start of a token alone is too short for any pattern to recognise, yet it is part of the
 * secret. A cut that would split a run of characters that may hold one ({@link IN_RUN}) moves back
 * to the run's start, so a run longer than `max` is not kept at all. Linear: the cut moves back at
 * most `max` characters.
 */
export function cutLength(text: string, max: number): number {
  if (text.length <= max) return text.length;
  let end = max;
  if (IN_RUN.test(text.charAt(max))) while (end > 0 && IN_RUN.test(text.charAt(end - 1))) end--;
  return end;
}

/**
 * {@link redactSecrets} of at most the first `kept` characters of `text` ({@link cutLength}), a cut
 * marked with an ellipsis: text shown only in part is redacted only as far as it is shown, so the
 * work a client's text costs is bounded whatever its length.
 */
export function redactStart(text: string, kept: number): string {
  const length = cutLength(text, kept);
  return length === text.length ? redactSecrets(text) : `${redactSecrets(text.slice(0, length))}…`;
}

/** {@link redactStart} of a client's text quoted where at most `shown` characters of it are shown (a field name in a problem). */
export const redactQuoted = (text: string, shown: number): string => redactStart(text, 4 * shown);

/**
 * Query parameter names whose value is a secret whatever it looks like: a password or key a client
 * put in a URL by mistake (a login form sent with GET) has no shape to recognise.
 */
const SECRET_NAME = /pass|pw|secret|token|key|auth|bearer|session|cookie|credential|sig/i;
/** The user information of an absolute-form request target (`http://user:password@host/…`). */
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#@]*@/i;

/** `query` with the value of each parameter whose name, percent-decoded, names a secret replaced. */
const redactParams = (query: string): string =>
  query.replace(/[^&;]+/g, (param) => {
    const eq = param.indexOf('=');
    if (eq < 0 || eq === param.length - 1) return param;
    // A name still encoded after the decodes allowed is hiding something: its value goes too.
    const name = percentDecoded(param.slice(0, eq).replaceAll('+', ' '));
    return name === null || SECRET_NAME.test(withoutInvisible(name)) ? `${param.slice(0, eq + 1)}${REDACTED}` : param;
  });

/**
 * `url` without user information, and with the value of every query parameter that names a secret
 * replaced (`&` or `;` between parameters; names compared percent-decoded, so `p%61ssword` is one).
 * An escaped `=`, `&` or `;` (`?password%3D…`, `?a=1%26password%3D…`) hides a parameter from the
 * split but not from a reader, so the decoded query is looked at too, and logged decoded if it
 * shows one. Linear: a few passes over the URL, each decode bounded.
 */
export function redactSecretParams(url: string): string {
  const target = url.replace(USERINFO, `$1${REDACTED}@`);
  const start = target.indexOf('?');
  if (start < 0) return target;
  const head = target.slice(0, start + 1);
  const query = redactParams(target.slice(start + 1));
  if (!PERCENT_ESCAPE.test(query)) return head + query;
  const decoded = percentDecoded(query);
  if (decoded === null) return head + REDACTED;
  const redacted = redactParams(decoded);
  return head + (redacted === decoded ? query : redacted);
}
