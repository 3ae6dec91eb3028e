import { isDeepStrictEqual } from 'node:util';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { CORS_EXPOSED_HEADERS } from './cors.js';
import type { FastifyInstance } from 'fastify';
import { OPTIONAL_BODY, TAGS } from '../api/operation.js';
import { RESPONSE_HEADERS } from '../api/responses.js';
import { securitySchemes } from '../api/security.js';
import { PROBLEMS, type ProblemCode, problemType } from '../errors.js';
import { SCOPE_DESCRIPTIONS } from '../tokens/scopes.js';

const DESCRIPTION = `rz-auth issues and checks the credentials of the platform.

An authenticated request carries \`Authorization: Bearer <token>\` with one of the tokens below; signup, login, passkey login, the
second step of a login, a password reset and the links mailed for it, email verification and email change, the scope list,
leak reports, the token formats, the key set, the OAuth endpoints of a device login (metadata, device authorization, token,
revocation) and the health checks need none (their \`security\` is empty).

| Type | Looks like | Obtained by | Lifetime |
|---|---|---|---|
| User token | a JWT (\`eyJ...\`, EdDSA) | login, signup | short (1 h by default); ends at logout |
| API token | \`rz_\` + 43 base62 + 6 base62 checksum | POST /api/tokens | until revoked or \`expires_at\` |
| App token | \`rza_\` + 43 base62 + 6 base62 checksum | POST /api/apps, POST /api/apps/{id}/tokens | until revoked or the app is deleted |

A platform service checks these with a service credential (\`rzs_\`): \`POST /api/introspect\` and \`GET /api/events\`.

API token scopes built into rz-auth (\`GET /api/scopes\` lists them with the platform's own):

${Object.entries(SCOPE_DESCRIPTIONS).map(([s, d]) => `- \`${s}\`: ${d}`).join('\n')}

Errors are RFC 9457 problem details (\`application/problem+json\`) with a stable \`code\`; each \`type\` links to a page under /problems/.
Authentication failures carry an RFC 6750 \`WWW-Authenticate\` header.

Browsers: CORS is answered for the exact origins the operator lists in \`CORS_ORIGINS\` (none by default; this server's are in the document's \`x-cors\`), preflight (\`OPTIONS\`) included on every operation. Credentials are bearer tokens, never cookies: no \`Access-Control-Allow-Credentials\`.`;

/**
 * Every route is either hidden from the document or declared with operation(), which derives its
 * security and responses from what the guard and the limits enforce: a route written any other
 * way would be documented by hand, and could say something the service does not do.
 */
function requireOperations(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (route.schema?.hide || route.method === 'HEAD') return;
    if (route.config?.operationId === undefined) throw new Error(`${String(route.method)} ${route.url}: declare the route with operation() from src/api/operation.ts, or hide it`);
    // What operation() documents (a body's problems) depends on the method it was told.
    if (route.config.method !== route.method) throw new Error(`${String(route.method)} ${route.url}: operation() was declared for ${String(route.config.method)}`);
  });
}

/**
 * Relative: the document is served by the service it describes, wherever that runs, so clients and
 * the docs page resolve it against the address they fetched it from. Not from the Host header,
 * which the client chooses. `x-internal: false`: the API is meant for the public.
 */
const SERVER = {
  url: '/',
  description: 'The rz-auth server that serves this document, in whatever environment it runs (local, staging or production).',
  'x-internal': false,
};

interface HeaderObject {
  readonly description: string;
  readonly schema: object;
}
interface GeneratedOperation {
  responses?: Record<string, { headers?: Record<string, unknown> }>;
  requestBody?: { required?: boolean };
  [OPTIONAL_BODY]?: true;
}
interface GeneratedDocument {
  readonly paths?: Record<string, Record<string, GeneratedOperation>>;
  readonly components?: Record<string, unknown>;
}

/** A header as the generator writes it out in a response: the description beside the schema. */
const asHeaderObject = ({ description, ...schema }: { readonly description: string }): HeaderObject => ({ schema, description });

/**
 * Nearly every response repeats the same few headers (the RateLimit fields, Retry-After, the RFC
 * 6750 challenge): each is written once under components.headers and referenced, which more than
 * halves the document and explains each header in one place. Bodies that may be left out are
 * marked so.
 */
function shareHeaders<D extends object>(doc: D): D {
  const generated: GeneratedDocument = doc;
  const shared = Object.fromEntries(Object.entries(RESPONSE_HEADERS).map(([name, header]) => [name, asHeaderObject(header)]));
  const paths = structuredClone(generated.paths ?? {});
  for (const item of Object.values(paths)) {
    for (const [method, { [OPTIONAL_BODY]: optionalBody, ...op }] of Object.entries(item)) {
      // The generator marks every body required; operation() marks those that may be left out.
      if (optionalBody && op.requestBody) op.requestBody.required = false;
      item[method] = op;
      for (const response of Object.values(op.responses ?? {})) {
        for (const [name, header] of Object.entries(response.headers ?? {})) {
          if (response.headers && isDeepStrictEqual(header, shared[name])) response.headers[name] = { $ref: `#/components/headers/${name}` };
        }
      }
    }
  }
  return { ...doc, paths, components: { ...generated.components, headers: shared } };
}

/** One form of the document, as sent: its Content-Type and its bytes. */
export interface DocumentForm {
  readonly type: string;
  bytes(): Buffer;
}

/** The document as JSON and as YAML, serialised once. */
export interface FixedDocument {
  readonly json: DocumentForm;
  readonly yaml: DocumentForm;
}

/** Where the docs page is, and the UI plugin's own copies of the document (`/json`, `/yaml`) below it. */
const DOCS_PREFIX = '/docs';

/**
 * The document is fixed once the app is ready (no route is added after), but the generator caches
 * only the object, and serialising the whole document for each request would let anyone spend the
 * server's CPU: each form is serialised once, on its first request, and every request sends the
 * same bytes. Not before: the document and its forms take a few MB that most servers, asked only
 * for the API, would hold for nothing.
 */
function fixedDocument(app: FastifyInstance): FixedDocument {
  const once = (make: () => string) => {
    let bytes: Buffer | undefined;
    return () => (bytes ??= Buffer.from(make()));
  };
  return {
    json: { type: 'application/json; charset=utf-8', bytes: once(() => JSON.stringify(app.swagger())) },
    // The type the UI plugin gives it.
    yaml: { type: 'application/x-yaml', bytes: once(() => app.swagger({ yaml: true })) },
  };
}

/**
 * The UI plugin serves the document too, from routes that declare no rate limit and serialise it
 * per request. Here they are given the per-address limit, by an onRoute hook that runs before the
 * limits' own reads the declaration (registerRateLimits), and send the fixed bytes instead.
 */
function fixUiDocumentRoutes(app: FastifyInstance, document: FixedDocument): void {
  const forms: Readonly<Record<string, DocumentForm>> = { [`${DOCS_PREFIX}/json`]: document.json, [`${DOCS_PREFIX}/yaml`]: document.yaml };
  app.addHook('onRoute', (route) => {
    const form = forms[route.url];
    if (!form) return;
    route.config = { ...route.config, rateLimit: 'address' };
    route.handler = (_request, reply) => reply.type(form.type).send(form.bytes());
  });
}

/**
 * Registers the OpenAPI generator. Must run before any route is added so it sees them all, and
 * before the rate limits' hooks (see {@link fixUiDocumentRoutes}). Returns the document, for
 * {@link registerDocs} to serve.
 */
export async function registerOpenApi(app: FastifyInstance, version: string, corsOrigins: readonly string[] = []): Promise<FixedDocument> {
  const cors = { origins: [...corsOrigins], credentials: false, exposed_headers: [...CORS_EXPOSED_HEADERS] };
  requireOperations(app);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'rz-auth', version, description: DESCRIPTION, license: { name: 'MIT', identifier: 'MIT' } },
      servers: [SERVER],
      components: { securitySchemes: securitySchemes() },
      tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    },
    transformObject: (document) => ('openapiObject' in document ? { ...shareHeaders(document.openapiObject), 'x-cors': cors } : document.swaggerObject),
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
  const document = fixedDocument(app);
  fixUiDocumentRoutes(app, document);
  return document;
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

const DOCS_PAGE = `${DOCS_PREFIX}/`;
/**
 * The page builds its document's address from its own, query string included (`/docs?x` then
 * asked for `/docs?x/json` and stayed blank), and the plugin redirects `index.html?x` to itself.
 * The page takes nothing from its query (the UI's state is in the fragment), so any address of the
 * page with a query, or `index.html` however spelt, is sent to the one plain address.
 */
const TO_PLAIN_PAGE = /^\/docs(?:\/?\?|\/static\/index\.html(?:\?|$))/;

/**
 * `/openapi.json`, the docs page at `/docs`, and one page per problem type. The document is served
 * to anyone, so it counts against the client address's limit like the other public routes.
 */
export async function registerDocs(app: FastifyInstance, document: FixedDocument): Promise<void> {
  const { json } = document;
  app.get('/openapi.json', { schema: { hide: true }, config: { rateLimit: 'address' } }, (_request, reply) => reply.type(json.type).send(json.bytes()));
  await app.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    staticCSP: true,
    uiConfig: { docExpansion: 'list', deepLinking: true },
    // The docs page itself needs scripts and styles; the API's default-src 'none' would blank it.
    // Not `upgrade-insecure-requests`: over plain HTTP on any host but loopback (a LAN address, a
    // name inside a container network) the browser then asked for its scripts over HTTPS and
    // showed an empty page. Framed by nobody, as X-Frame-Options already says.
    transformStaticCSP: (header) => header.replace(/\s*upgrade-insecure-requests;?/, '').replace("frame-ancestors 'self'", "frame-ancestors 'none'"),
    uiHooks: { onRequest: (request, reply, done) => (TO_PLAIN_PAGE.test(request.url) ? void reply.redirect(DOCS_PAGE) : done()) },
  });
  for (const code of Object.keys(PROBLEMS) as ProblemCode[]) {
    app.get(problemType(code), { schema: { hide: true } }, async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=3600');
      reply.header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'");
      return reply.type('text/html; charset=utf-8').send(problemPage(code));
    });
  }
}
