import { cutLength, redactSecrets } from './redact.js';
import { clip, printable } from './text.js';

/** What of a user agent is kept (sessions, the audit log): enough to recognise a client, bounded. */
export const MAX_USER_AGENT = 256;

const utf8 = new TextDecoder('utf-8', { fatal: true });
const LATIN1_HIGH = /[\u0080-\u00ff]/;
const BEYOND_LATIN1 = /[^\u0000-\u00ff]/;

/**
 * Node reads header bytes as Latin-1, so a UTF-8 user agent arrives as mojibake: its bytes are
 * decoded again as UTF-8 when they are UTF-8, and kept as they came otherwise. When the length cap
 * `cut` the value, up to three last bytes may be a sequence it split: those are dropped.
 */
function fromHeaderBytes(value: string, cut: boolean): string {
  if (!LATIN1_HIGH.test(value) || BEYOND_LATIN1.test(value)) return value;
  const bytes = Buffer.from(value, 'latin1');
  for (let drop = 0; drop <= (cut ? 3 : 0) && drop < bytes.length; drop++) {
    try {
      return utf8.decode(bytes.subarray(0, bytes.length - drop));
    } catch {
      // Not UTF-8 up to here.
    }
  }
  return value;
}

/**
 * A User-Agent as recorded and shown back: decoded, controls, bidirectional overrides and invisible
 * characters removed, token shapes redacted, percent-encoded and full-width ones too (a client
 * that puts a token there must not have it stored), at most {@link MAX_USER_AGENT} code points;
 * null when absent or empty. The header is cut to a bounded prefix first, so the work does not
 * grow with what was sent.
 */
export function cleanUserAgent(value: string | undefined): string | null {
  if (value === undefined) return null;
  // Never inside a run that may be a token: the redaction would not see what the cut kept of it.
  const prefix = value.slice(0, cutLength(value, 4 * MAX_USER_AGENT));
  // Controls go before the redaction: removed after it, one inside a token would join its halves
  // into a whole token that the redaction had not seen.
  const visible = printable(fromHeaderBytes(prefix, prefix.length < value.length), prefix.length);
  // The log's redaction: it also reads the text as a person would, percent-decoded and with
  // full-width letters as the ASCII they show (`ｒｚ＿…` is a token to whoever copies it).
  return clip(redactSecrets(visible).trim(), MAX_USER_AGENT) || null;
}
