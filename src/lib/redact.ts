import { asRead, decodeOnce, NOT_PLAIN, withoutInvisible } from './text.js';

/**
 * Token-shaped strings, wherever they stand (no `\b`: a percent-encoded space or quote before a
 * token is a letter or digit), in any letter case: API, app and service tokens, even with a bad
 * checksum, the link tokens of mails (`rzl_`) and derived children (`rzd_`), both base64url, webhook signing secrets (`whsec_`), and anything that starts like a JWT. Logs must never
 * hold a credential, even one a client put in a URL by mistake. Linear on any input: the JWT
 * alternative can always end where its run of base64url characters ends (the dots are optional),
 * so a match never fails after a long scan and no start position is scanned twice.
 */
const TOKEN_SHAPED = /rz[as]?_[0-9a-z]{8,}|rz[dl]_[0-9a-z_-]{8,}|whsec_[0-9a-z+/]*|eyJ[a-z0-9_-]*(?:\.[a-z0-9_-]*){0,2}/gi;
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
/** Enough for a value encoded twice over and then some; each pass is linear. */
const MAX_DECODES = 4;

/**
 * Whether `text` may hide a token from the patterns: it holds an escape, or a character that is
 * not printable ASCII. Text with neither (nearly every URL) is redacted as it stands: looking for
 * `%` is a memchr, and one scan for a class of characters is about what looking for an escape cost.
 */
const mayHide = (text: string): boolean => text.includes('%') || NOT_PLAIN.test(text);



/**
 * `text` as read ({@link asRead}) and percent-decoded up to {@link MAX_DECODES} times over, read
 * again after each round (an escape can stand for a full-width letter or an invisible character);
 * null when it is still encoded after that. Linear: each round is one pass, NFKD makes at most 18
 * characters of one, and text once normalised stays as it is.
 */
function readable(text: string): string | null {
  let read = asRead(text);
  for (let i = 0; i < MAX_DECODES && PERCENT_ESCAPE.test(read); i++) read = asRead(decodeOnce(read));
  return PERCENT_ESCAPE.test(read) ? null : read;
}

/**
 * Text as logs and error bodies may show it (a URL, a message, a field name a client sent), with
 * every token shape and bare token body redacted. Escapes (`%72z_…`, `rz%5F…`), invisible
 * characters (`rz_ab\u00adcd…`, also escaped) and full-width letters hide a token from the patterns
 * but not from a reader, so such text is looked at as read and decoded ({@link readable}); if that
 * holds a token, it is returned with the token redacted, otherwise the text as it came. Text still
 * encoded after four rounds is replaced whole: no client encodes a URL five times over except to
 * hide something.
 */
export function redactSecrets(text: string): string {
  if (!mayHide(text)) return redactClientText(text);
  const read = readable(text);
  if (read === null) return REDACTED;
  const redacted = redactClientText(read);
  return redacted === read ? redactClientText(text) : redacted;
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
 * What a message may echo of text someone typed (a CLI argument, an unknown event type): at most
 * `max` characters ({@link redactStart}), then controls and invisible characters removed, which a
 * terminal would act on. Removed after the redaction, which reads through them anyway.
 */
export const redactEcho = (text: string, max: number): string => withoutInvisible(redactStart(text, max)).trim();

/**
 * Query parameter names whose value is a secret whatever it looks like: a password or key a client
 * put in a URL by mistake (a login form sent with GET) has no shape to recognise; a device login's
 * `user_code` (the device page's link carries it) and `device_code`, and any OAuth `code`.
 */
const SECRET_NAME = /pass|pw|secret|token|key|auth|bearer|session|cookie|credential|sig|code/i;
/** The user information of an absolute-form request target (`http://user:password@host/…`). */
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#@]*@/i;

/**
 * Where parameters start: at the query, parameters after `;` in the path, or the fragment; -1 for
 * none. Three memchrs rather than a regex: it runs on every logged URL, and most have none.
 */
function paramsStart(url: string): number {
  let start = -1;
  for (const mark of ['?', ';', '#']) {
    const at = url.indexOf(mark);
    if (at >= 0 && (start < 0 || at < start)) start = at;
  }
  return start;
}

/** A parameter: what stands between `&`, `;`, `?` and `#` once parameters have started. */
const PARAM = /[^&;?#]+/g;

/** A parameter name that names a secret, read as {@link readable} reads it (`p%61ssword`, `ｐａｓｓ`, `pass\u200bword`). */
function namesSecret(name: string): boolean {
  const read = readable(name.replaceAll('+', ' '));
  // A name still encoded after the decodes allowed is hiding something: its value goes too.
  return read === null || SECRET_NAME.test(read);
}

/**
 * `param` with its value replaced when its name names a secret. A value that is itself a pair
 * (`?=password=…`, `?a=password=…`) is looked at in turn: a reader sees `password=…` either way.
 * Linear: each stretch between two `=` is read once.
 */
function redactParam(param: string): string {
  for (let from = 0, eq = param.indexOf('='); eq >= 0 && eq < param.length - 1; from = eq + 1, eq = param.indexOf('=', from)) {
    if (namesSecret(param.slice(from, eq))) return `${param.slice(0, eq + 1)}${REDACTED}`;
  }
  return param;
}

/** `url` with the value of each parameter that names a secret replaced, the path before them as it is. */
function redactParams(url: string): string {
  const start = paramsStart(url);
  return start < 0 ? url : url.slice(0, start) + url.slice(start).replace(PARAM, redactParam);
}

/**
 * `url` without user information, and with the value of every parameter that names a secret
 * replaced: in the query, after `;` in the path (`/login;password=…`) and in a fragment, with `&`,
 * `;`, `?` or `#` between them; names compared as read (decoded, normalised, in any letter case).
 * An escaped `?`, `=`, `&` or `;` (`/login%3Fpassword%3D…`, `?a=1%26password%3D…`, also encoded
 * twice) hides a parameter from the split but not from a reader, so the URL is also looked at as
 * read, and logged as read if that shows one. Linear: a few passes over the URL, each decode bounded.
 */
export function redactSecretParams(url: string): string {
  const literal = redactParams(url.replace(USERINFO, `$1${REDACTED}@`));
  // Only an escape can hide a separator from the split (`%3F`, `%26`): Node hands the request
  // target over as bytes, one character each, so it holds no full-width `？` to read as `?`.
  // Names are read on their own (namesSecret).
  if (!literal.includes('%')) return literal;
  // The redacted text is the one read: a value replaced above is not shown decoded.
  const read = readable(literal);
  if (read === null) return REDACTED;
  const redacted = redactParams(read);
  return redacted === read ? literal : redacted;
}
