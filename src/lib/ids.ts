import { randomFillSync } from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** True for a lower-case hyphenated UUID, the only id form the service issues. */
export const isUuid = (value: string): boolean => UUID.test(value);

/** Ids made from one draw of randomness (Node's randomUUID draws for 128 at a time too). */
const BATCH = 128;
const BYTES = 16;
const TEXT = 36;
/** Each byte's two lower-case hex digits as a 16-bit little-endian pair: first digit, second digit. */
const PAIRS = new DataView(new ArrayBuffer(2 * 256));
for (let byte = 0; byte < 256; byte++) {
  const digits = byte.toString(16).padStart(2, '0');
  PAIRS.setUint16(2 * byte, digits.charCodeAt(0) | (digits.charCodeAt(1) << 8), true);
}

const random = Buffer.allocUnsafeSlow(BYTES * BATCH);
const randomView = new DataView(random.buffer, random.byteOffset, random.byteLength);
/** The batch's text; the dashes are written once here and the digits around them each time. */
const text = Buffer.alloc(TEXT * BATCH, '-');
const textView = new DataView(text.buffer, text.byteOffset, text.byteLength);
let batch = '';
let next = BATCH;

/** Formats the next {@link BATCH} random version 4 UUIDs (RFC 9562 §5.4) into one string. */
function refill(): void {
  randomFillSync(random);
  for (let id = 0; id < BATCH; id++) {
    const from = id * BYTES;
    randomView.setUint8(from + 6, (randomView.getUint8(from + 6) & 0x0f) | 0x40); // version 4
    randomView.setUint8(from + 8, (randomView.getUint8(from + 8) & 0x3f) | 0x80); // variant 10
    let at = id * TEXT;
    for (let i = 0; i < BYTES; i++) {
      if (i === 4 || i === 6 || i === 8 || i === 10) at++; // past a dash
      textView.setUint16(at, PAIRS.getUint16(2 * randomView.getUint8(from + i), true), true);
      at += 2;
    }
  }
  batch = text.toString('latin1');
  next = 0;
}

/**
 * A random (version 4) UUID for a request id: Node's CSPRNG, 122 random bits, as `randomUUID()`
 * makes, but each a slice of one flat string per batch, which node:http checks as a header value
 * without first copying it whole (randomUUID's result is joined from pieces).
 */
export function requestId(): string {
  if (next === BATCH) refill();
  const start = next++ * TEXT;
  return batch.slice(start, start + TEXT);
}
