import { ALPHABET, BODY_LENGTH, CHECKSUM_LENGTH, type OpaqueKind, PREFIX } from '../../lib/token-format.js';

const TYPES: Readonly<Record<OpaqueKind, 'api_token' | 'app_token' | 'service_credential'>> = { api: 'api_token', app: 'app_token', service: 'service_credential' };

const REPORT_PATH = '/api/tokens/leaked';

/**
 * What scanners need to find our tokens (GET /.well-known/rz-token-formats.json), built from the
 * very constants that make and check them, so the published rule cannot drift from the real one.
 */
export function tokenFormats() {
  const tail = BODY_LENGTH + CHECKSUM_LENGTH;
  return {
    formats: [
      ...(Object.keys(PREFIX) as OpaqueKind[]).map((kind) => ({
        type: TYPES[kind],
        prefix: PREFIX[kind],
        length: PREFIX[kind].length + tail,
        // Word boundaries for scanning text; `pattern` is the whole-string form.
        regex: `\\b${PREFIX[kind]}[0-9A-Za-z]{${tail}}\\b`,
        pattern: `^${PREFIX[kind]}[0-9A-Za-z]{${tail}}$`,
      })),
      // Contract §14.4: a child is at most 4,096 characters; its body is base64url, so no word boundary ends it.
      { type: 'derived_token' as const, kind: 'derived' as const, prefix: 'rzd_', regex: 'rzd_[A-Za-z0-9_-]{140,4092}', pattern: '^rzd_[A-Za-z0-9_-]{140,4092}$', checksum: 'last 6 characters: base62 CRC32 of the rest' },
    ],
    checksum: {
      algorithm: 'crc32' as const,
      input: `the prefix and the ${BODY_LENGTH} characters after it`,
      encoding: 'base62' as const,
      alphabet: ALPHABET,
      length: CHECKSUM_LENGTH,
      description:
        `The last ${CHECKSUM_LENGTH} characters are the CRC32 (IEEE, as zlib computes it) of the UTF-8 bytes of prefix + body, ` +
        `written in base62 with the alphabet given, most significant digit first, padded with leading "0" to ${CHECKSUM_LENGTH} characters. ` +
        'A string whose checksum does not match is not a token: scanners can drop it without asking.',
    },
    report_url: REPORT_PATH,
  };
}
