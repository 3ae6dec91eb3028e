import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { PROBLEMS, type ProblemCode } from '../errors.js';
import { SCOPE_DESCRIPTIONS } from '../tokens/scopes.js';
import { problemType } from './problem.js';

const DESCRIPTION = `rz-auth issues and checks the credentials of the platform.

Every request carries \`Authorization: Bearer <token>\` with one of:

| Type | Looks like | Obtained by | Lifetime |
|---|---|---|---|
| User token | a JWT (\`eyJ...\`, EdDSA) | login, signup | short (1 h by default); ends at logout |
| API token | \`rz_\` + 43 base62 + 6 base62 checksum | POST /api/tokens | until revoked or \`expires_at\` |
| App token | \`rza_\` + 43 base62 + 6 base62 checksum | POST /api/apps, POST /api/apps/{id}/tokens | until revoked or the app is deleted |

A platform service checks these with a service credential (\`rzs_\`): \`POST /api/introspect\` and \`GET /api/events\`.

API token scopes built into rz-auth (\`GET /api/scopes\` lists them with the platform's own):

${Object.entries(SCOPE_DESCRIPTIONS).map(([s, d]) => `- \`${s}\`: ${d}`).join('\n')}

Errors are RFC 9457 problem details (\`application/problem+json\`) with a stable \`code\`; each \`type\` links to a page under /problems/.
Authentication failures carry an RFC 6750 \`WWW-Authenticate\` header.`;

/** Registers the OpenAPI generator. Must run before any route is added so it sees them all. */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'rz-auth', version, description: DESCRIPTION },
      components: {
        securitySchemes: {
          userToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A user token from login or signup.' },
          apiToken: { type: 'http', scheme: 'bearer', bearerFormat: 'rz_', description: 'An API token; the scope it needs is listed per operation.' },
          appToken: { type: 'http', scheme: 'bearer', bearerFormat: 'rza_', description: 'An app token; it acts on its own app only.' },
          serviceToken: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'rzs_',
            description: 'A platform service\'s credential (rz-auth services create): introspection and the event stream only.',
          },
        },
      },
      tags: [
        { name: 'auth', description: 'Signup, login, logout' },
        { name: 'me', description: 'The caller' },
        { name: 'tokens', description: 'API tokens' },
        { name: 'apps', description: 'Apps and app tokens' },
        { name: 'keys', description: 'Public signing keys' },
        { name: 'scopes', description: 'The scopes tokens can carry: built-in and the platform\'s' },
        { name: 'platform services', description: 'For the platform\'s services, with a service credential: introspection and the event stream' },
        { name: 'operations', description: 'Health and readiness probes' },
      ],
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

function problemPage(code: ProblemCode): string {
  const p = PROBLEMS[code];
  const md = (s: string) => escapeHtml(s).replace(/`([^`]+)`/g, '<code>$1</code>');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${p.title} · rz-auth</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5">
<p><a href="/docs">rz-auth API docs</a></p>
<h1>${p.status} ${escapeHtml(p.title)}</h1>
<p>Code: <code>${code}</code></p>
<p>${md(p.explanation)}</p>
</body></html>`;
}

/** `/openapi.json`, the docs page at `/docs`, and one page per problem type. */
export async function registerDocs(app: FastifyInstance): Promise<void> {
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    uiConfig: { docExpansion: 'list', deepLinking: true },
    // The docs page itself needs scripts and styles; the API's default-src 'none' would blank it.
    transformStaticCSP: (header) => header,
  });
  for (const code of Object.keys(PROBLEMS) as ProblemCode[]) {
    app.get(problemType(code), { schema: { hide: true } }, async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=3600');
      reply.header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'");
      return reply.type('text/html; charset=utf-8').send(problemPage(code));
    });
  }
}
