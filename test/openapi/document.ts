import { startTestApp } from '../helpers/app.js';

export interface Operation {
  readonly operationId?: string;
  readonly summary?: string;
  readonly description?: string;
  readonly tags?: string[];
  readonly security?: Array<Record<string, string[]>>;
  readonly requestBody?: unknown;
  readonly parameters?: unknown[];
  readonly responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema?: unknown }> }>;
}

export interface Document {
  readonly paths: Record<string, Record<string, Operation>>;
  readonly [key: string]: unknown;
}

/** The document exactly as the service serves it at /openapi.json. */
export async function liveDocument(): Promise<{ text: string; doc: Document }> {
  const t = await startTestApp();
  try {
    const res = await t.inject({ method: 'GET', url: '/openapi.json' });
    if (res.statusCode !== 200) throw new Error(`GET /openapi.json: ${res.statusCode}`);
    return { text: res.body, doc: res.json() as Document };
  } finally {
    await t.close();
  }
}

/** Every operation of the document as [method, path, operation]. */
export const operationsOf = (doc: Document): Array<[string, string, Operation]> =>
  Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]): [string, string, Operation] => [method, path, op]));

/** The operationId of the operation a location in the document lies in, if any. */
export function operationAt(doc: Document, path: readonly (string | number)[]): string | undefined {
  if (path[0] !== 'paths' || path.length < 3) return undefined;
  return doc.paths[String(path[1])]?.[String(path[2])]?.operationId;
}
