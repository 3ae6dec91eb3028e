import type { FieldError } from '../errors.js';
import { holdsTokenBody } from './token-format.js';

/**
 * C0, DEL and C1 controls (U+009B is a terminal escape introducer), the line and paragraph
 * separators (a line break in a one-line label, like `\n`), and the bidirectional overrides that
 * make text display in a different order than it is stored ("Trojan Source").
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const CONTROL_EXCEPT_NEWLINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/**
 * A token or a webhook signing secret by its prefix, in any letter case (`RZ_…` and `WHSEC_…` are
 * the same secrets to a reader), a token even with a checksum that fails: a mistyped one is a
 * character away from the secret. Fixed lengths, so linear.
 */
const PREFIXED_SECRET = /rz[as]?_[0-9a-z]{49}|whsec_[0-9a-z+/]{32}/i;
// Linear: a JWT is looked for only where a run of base64url characters starts, so no run is
// scanned from two starts.
const SIGNED_JWT = /(?<![\w-])eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{16}/;
export const NO_CREDENTIAL = 'must not contain a credential (a token, a signing secret or a JWT)';

/**
 * Whether `value` holds a credential pasted where a name belongs: a token's body (with or without
 * its prefix), a webhook signing secret or a signed JWT. Names are shown in lists, the audit log
 * and webhook deliveries, so one holding a credential is refused rather than spread. Looked for in
 * the text as a reader sees it: compatibility normalisation turns full-width and styled letters
 * back into the ones they show, and an invisible character splits a credential for the patterns,
 * not for whoever copies it. NFKD rather than NFKC: composing would join a token's last letter and
 * a combining mark after it into one letter no pattern knows (`e` + U+0301 is `é`). Narrower than
 * the log redaction's shapes: a name may well start with `rz_` or hold `eyJ`. Linear: NFKD makes
 * at most 18 characters of a code point, at most 5 of them letters or digits (`㎯` is `rad∕s2`), so
 * a 1,000-character description is at most 5,000 windows for {@link holdsTokenBody}, and each
 * pattern reads each character a bounded number of times.
 */
export function holdsCredential(value: string): boolean {
  const seen = asRead(value);
  return PREFIXED_SECRET.test(seen) || SIGNED_JWT.test(seen) || holdsTokenBody(seen);
}

/** Length in Unicode code points, which is what a person counts. */
export const codePoints = (value: string): number => [...value].length;

/** At most `max` code points: longer text is cut and ends with an ellipsis. */
export function clip(value: string, max: number): string {
  // A string's length in UTF-16 units is never less than its length in code points.
  if (value.length <= max) return value;
  const points = [...value];
  return points.length <= max ? value : `${points.slice(0, max - 1).join('')}…`;
}

/**
 * A trimmed label (token or app name): 1 to `max` characters, no control characters, and something
 * that shows (a name of zero-width spaces is as empty as one of spaces). Returns the trimmed value
 * or the field error.
 */
export function cleanLabel(value: string, field: string, max: number): string | FieldError {
  const trimmed = value.trim();
  if (codePoints(trimmed) > max) return { field, message: `must be at most ${max} characters` };
  if (CONTROL.test(trimmed)) return { field, message: 'must not contain control characters' };
  const visible = withoutInvisible(trimmed);
  if (visible.trim() === '') return { field, message: 'must not be empty' };
  if (holdsCredential(trimmed)) return { field, message: NO_CREDENTIAL };
  return trimmed;
}

/** Free text (a description): up to `max` characters; line breaks and tabs allowed, other controls not. */
export function cleanText(value: string, field: string, max: number): string | FieldError {
  if (codePoints(value) > max) return { field, message: `must be at most ${max} characters` };
  if (CONTROL_EXCEPT_NEWLINES.test(value)) return { field, message: 'must not contain control characters' };
  if (holdsCredential(value)) return { field, message: NO_CREDENTIAL };
  return value;
}

const CONTROLS = new RegExp(CONTROL.source, 'g');

/** Characters that display as nothing: soft hyphen, zero-width spaces and joiners, the BOM... */
const INVISIBLES = /\p{Default_Ignorable_Code_Point}/gu;

/**
 * `value` without control characters, bidirectional overrides and characters that display as
 * nothing (which a token pasted from a chat or a web page can pick up); linear.
 */
export const withoutInvisible = (value: string): string => value.replace(CONTROLS, '').replace(INVISIBLES, '');

/**
 * Text a client chose that is shown back later but never checked (a User-Agent): control
 * characters, bidirectional overrides and invisible characters removed, at most `max` code points.
 * Cut to a bounded length first, so the work is linear in `max`, not in what was sent.
 */
export function printable(value: string, max: number): string {
  return clip(withoutInvisible(value.slice(0, 4 * max)).trim(), max);
}

const PERCENT_ESCAPES = /(?:%[0-9A-Fa-f]{2})+/g;

/**
 * One round of percent-decoding that never throws: each run of escapes is decoded as UTF-8, bytes
 * that are not UTF-8 becoming U+FFFD. No exception per bad run: decodeURIComponent's throw and
 * catch for each of thousands of them (`%ffx%ffx…`) would cost far more than the text's length.
 */
export function decodeOnce(text: string): string {
  return text.replace(PERCENT_ESCAPES, (run) => Buffer.from(run.replaceAll('%', ''), 'hex').toString('utf8'));
}

/** Anything but printable ASCII: a control, an invisible character, a full-width or styled letter. */
export const NOT_PLAIN = /[^\u0020-\u007e]/;

/**
 * `text` as a reader sees it: full-width (`ｒｚ＿`), styled and other compatibility forms read as
 * the letters they show, controls and invisible characters (soft hyphen, zero-width space,
 * bidirectional overrides, NUL) removed; plain ASCII as it is, at the cost of one scan. NFKD, not
 * NFKC: composing would join the last letter of a token and a combining mark after it into one
 * letter the patterns do not know, and the run of a bare token body would fall short of 40.
 */
export const asRead = (text: string): string => (NOT_PLAIN.test(text) ? withoutInvisible(text.normalize('NFKD')) : text);
