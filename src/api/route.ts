import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';

/** The Fastify instance routes are written against: TypeBox schemas give the handler types. */
export type Http = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** OpenAPI security requirements, named after the schemes in the document. */
export const security = {
  user: { userToken: [] as string[] },
  api: (scope?: string) => ({ apiToken: scope ? [scope] : [] }),
  app: { appToken: [] as string[] },
};
