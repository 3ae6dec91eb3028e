import { type Static, Type } from 'typebox';
import { contextOf } from '../../api/context.js';
import { operation } from '../../api/operation.js';
import type { Http } from '../../api/route.js';
import { tokenFormats } from './formats.js';
import { type LeakResponse, wellFormed } from './service.js';

/** The most strings one report may carry. */
export const MAX_REPORTED = 100;
/**
 * Far longer than any token of ours (53 characters), and than a user JWT (under 1 KB) pasted with
 * them from the same leaked file, which is ignored: a longer string is refused, never scanned.
 */
const MAX_STRING = 4096;

const Reported = Type.String({ maxLength: MAX_STRING, description: 'A string that may be a token.', examples: ['rz_...'] });

const TokenList = Type.Object(
  { tokens: Type.Array(Reported, { minItems: 1, maxItems: MAX_REPORTED, description: `1 to ${MAX_REPORTED} strings that may be tokens.` }) },
  { additionalProperties: false, title: 'Token list' },
);

/** What GitHub's secret scanning partner program posts: one entry per match. */
const GitHubMatches = Type.Array(
  Type.Object(
    {
      token: Reported,
      type: Type.Optional(Type.String({ maxLength: 100, description: 'The secret type the scanner matched.' })),
      url: Type.Optional(Type.String({ maxLength: 2048, description: 'Where it was found; not recorded, since anyone can send it.' })),
      source: Type.Optional(Type.String({ maxLength: 100 })),
    },
    { additionalProperties: false },
  ),
  { minItems: 1, maxItems: MAX_REPORTED, title: 'GitHub secret scanning matches' },
);

const ReportBody = Type.Union([TokenList, GitHubMatches]);

/** The strings of either body. */
const reportedStrings = (body: Static<typeof ReportBody>): string[] => (Array.isArray(body) ? body.map((m) => m.token) : body.tokens);

/** A header sent once; twice is not GitHub's, and verifies nothing. */
const single = (value: string | string[] | undefined): string | undefined => (typeof value === 'string' ? value : undefined);

const Received = Type.Object(
  { status: Type.Enum(['received'], { description: 'Always the same, whatever matched.' }) },
  { additionalProperties: false },
);

const Formats = Type.Object(
  {
    formats: Type.Array(
      Type.Object(
        {
          type: Type.Enum(['api_token', 'app_token', 'service_credential', 'derived_token']),
          kind: Type.Optional(Type.Enum(['derived'], { description: 'Derived children (`rzd_`, docs/derived-tokens.md): variable length, base64url body.' })),
          prefix: Type.String({ maxLength: 8 }),
          length: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: 256, description: 'Absent for a variable-length format.' })),
          regex: Type.String({ maxLength: 64, description: 'For scanning text (word boundaries).' }),
          pattern: Type.String({ maxLength: 64, description: 'The whole string.' }),
          checksum: Type.Optional(Type.String({ maxLength: 100, description: 'Where a variable-length format keeps its checksum.' })),
        },
        { additionalProperties: false },
      ),
      { maxItems: 8 },
    ),
    checksum: Type.Object(
      {
        algorithm: Type.Enum(['crc32']),
        input: Type.String({ maxLength: 100 }),
        encoding: Type.Enum(['base62']),
        alphabet: Type.String({ maxLength: 62 }),
        length: Type.Integer({ format: 'int32', minimum: 1, maximum: 16 }),
        description: Type.String({ maxLength: 1000 }),
      },
      { additionalProperties: false },
    ),
    report_url: Type.String({ maxLength: 64, description: 'Where to report a leaked token (POST).' }),
  },
  { additionalProperties: false },
);

/** Leak response: POST /api/tokens/leaked, and the token formats scanners look for. */
export function leakRoutes(app: Http, leaks: LeakResponse): void {
  const report = operation({
      method: 'POST',
      operationId: 'reportLeakedTokens',
      tags: ['leaks'],
      summary: 'Report leaked tokens: every live one among them is revoked',
      description:
        `No authentication: holding a token is proof enough to kill it. Takes \`{"tokens": [...]}\` or the array GitHub secret scanning sends, up to ${MAX_REPORTED} strings. ` +
        'Every active API token, app token or service credential among them is revoked on every instance, and its owner gets a `token.leaked` audit event. ' +
        'The answer is the same 202 whatever matched. Limited per client address (policy `leak-report`). See docs/leak-response.md.',
      auth: 'public',
      rateLimit: 'leak-report',
      body: ReportBody,
      success: { 202: { description: 'Received; the same answer whatever matched.', schema: Received } },
  });
  app.post('/api/tokens/leaked', {
    ...report,
    // The signature of a GitHub report is over the raw bytes; each well-formed string costs a request.
    config: { ...report.config, keepRawBody: true, rateLimitWeight: (body: unknown) => wellFormed(reportedStrings(body as Static<typeof ReportBody>)).length },
    handler: async (request, reply) => {
      const body = request.body;
      const strings = reportedStrings(body);
      const signature = { keyId: single(request.headers['github-public-key-identifier']), signature: single(request.headers['github-public-key-signature']) };
      const source = Array.isArray(body) ? { format: 'github' as const, body: request.rawBody ?? Buffer.alloc(0), signature } : { format: 'list' as const };
      await leaks.report(strings, source, contextOf(request));
      return reply.code(202).send({ status: 'received' as const });
    },
  });

  const formats = tokenFormats();
  app.get('/.well-known/rz-token-formats.json', {
    ...operation({
      method: 'GET',
      operationId: 'getTokenFormats',
      tags: ['leaks'],
      summary: 'The token formats, for secret scanners',
      description: 'No authentication. Each prefix, its regular expression, and the checksum rule that tells a real token from a look-alike offline.',
      auth: 'public',
      rateLimit: 'address',
      success: { 200: { description: 'The formats.', schema: Formats } },
    }),
    handler: async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=3600');
      return formats;
    },
  });
}
