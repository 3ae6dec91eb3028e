import type { FieldError } from '../errors.js';

/**
 * C0, DEL and C1 controls (U+009B is a terminal escape introducer), the line and paragraph
 * separators (a line break in a one-line label, like `\n`), and the bidirectional overrides that
 * make text display in a different order than it is stored ("Trojan Source").
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const CONTROL_EXCEPT_NEWLINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/**
 * A credential pasted where a name belongs: a whole API, app or service token, a webhook signing
 * secret, or a signed JWT. Names are shown in lists, the audit log and webhook deliveries, so one
 * holding a credential is refused rather than spread. Narrower than the log redaction's shapes: a
 * name may well start with `rz_` or hold `eyJ`.
 */
// Linear: the token and secret are fixed lengths, and a JWT is looked for only where a run of
// base64url characters starts, so no run is scanned from two starts.
const CREDENTIAL = /rz[as]?_[0-9A-Za-z]{49}(?![0-9A-Za-z])|whsec_[0-9A-Za-z+/]{32}|(?<![\w-])eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{16}/;
const NO_CREDENTIAL = 'must not contain a credential (a token, a signing secret or a JWT)';

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
  if (CREDENTIAL.test(visible)) return { field, message: NO_CREDENTIAL };
  return trimmed;
}

/** Free text (a description): up to `max` characters; line breaks and tabs allowed, other controls not. */
export function cleanText(value: string, field: string, max: number): string | FieldError {
  if (codePoints(value) > max) return { field, message: `must be at most ${max} characters` };
  if (CONTROL_EXCEPT_NEWLINES.test(value)) return { field, message: 'must not contain control characters' };
  // Looked for as a reader sees the text: an invisible character splits a credential for the
  // pattern, not for whoever copies it.
  if (CREDENTIAL.test(withoutInvisible(value))) return { field, message: NO_CREDENTIAL };
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
