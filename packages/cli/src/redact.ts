/*
 * What --debug may print (contract §13.8): never a token. Every rz_/rza_/rzd_ value and the
 * device_code (it redeems a token while the request is approved) are cut down to their prefix.
 * The patterns have no overlapping quantifiers, so they are linear in their input.
 */
const TOKEN = /\b(rz|rza|rzd)_[A-Za-z0-9_-]*/g;
const DEVICE_CODE = /(device_code"?\s*[=:]\s*"?)[A-Za-z0-9_-]+/g;

/** The text with every token-shaped string and device code replaced by a marker. */
export function redact(text: string): string {
  return text.replace(TOKEN, '$1_[redacted]').replace(DEVICE_CODE, '$1[redacted]');
}

/** Request or response headers as debug lines, with Authorization's value never shown. */
export function redactHeaders(headers: Headers): string[] {
  const lines: string[] = [];
  headers.forEach((value, name) => {
    lines.push(`${name}: ${name.toLowerCase() === 'authorization' ? '[redacted]' : redact(value)}`);
  });
  return lines;
}
