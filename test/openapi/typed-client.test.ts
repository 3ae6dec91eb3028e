import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RealServer, startRealServer } from '../helpers/real-server.js';
import type { Document } from './document.js';
import { messageOf, typeErrorsWith } from './type-errors.js';

/**
 * A client generated from the live document, as a user would make one (examples/typed-client):
 * types from openapi-typescript, calls through openapi-fetch. It must type-check against the
 * document the server serves and then work against that server, so the document and the service
 * cannot drift apart without this failing.
 */

const EXAMPLE = fileURLToPath(new URL('../../examples/typed-client/', import.meta.url));
const GENERATED = join(EXAMPLE, 'src', 'openapi.d.ts');

const generate = async (doc: object): Promise<string> => astToString(await openapiTS(doc as Parameters<typeof openapiTS>[0]));

/** The example's type errors with `generated` as its src/openapi.d.ts, which is never written to disk. */
const typeErrors = (generated: string): string[] =>
  typeErrorsWith(join(EXAMPLE, 'tsconfig.json'), GENERATED, generated, [join(EXAMPLE, 'src', 'client.ts')]).map(messageOf);

describe('a typed client generated from the live document', () => {
  let server: RealServer;
  let url: string;
  let doc: Document;
  beforeAll(async () => {
    server = await startRealServer();
    url = `http://127.0.0.1:${server.port}`;
    doc = (await (await fetch(`${url}/openapi.json`)).json()) as Document;
  });
  afterAll(() => server.close());

  it('type-checks against the document the server serves', async () => {
    expect(typeErrors(await generate(doc))).toEqual([]);
  });

  it('fails to type-check once the document drifts from what the client sends (positive control)', async () => {
    const drifted = structuredClone(doc) as { paths: Record<string, Record<string, { requestBody: { content: Record<string, { schema: { properties: Record<string, unknown>; required: string[] } }> } }>> };
    const body = drifted.paths['/api/tokens']?.post?.requestBody.content['application/json']?.schema;
    if (!body) throw new Error('POST /api/tokens has no JSON body in the document');
    body.properties = Object.fromEntries(Object.entries(body.properties).map(([key, value]) => [key === 'name' ? 'label' : key, value]));
    body.required = body.required.map((key) => (key === 'name' ? 'label' : key));
    expect(typeErrors(await generate(drifted))).toEqual([expect.stringContaining("'name' does not exist in type '{ label: string;")]);
  });

  it('signs up, logs in, creates and lists tokens and registers an app against the server', async () => {
    // As its README runs it (`npm start`): its own process, through tsx.
    const run = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/client.ts'], { cwd: EXAMPLE, env: { ...process.env, RZ_AUTH_URL: url } });
    const result = JSON.parse(run.stdout) as { apiTokenId: string; listedTokenIds: string[]; appReadWithApiToken: string; appTokenId: string };
    expect(result.listedTokenIds).toContain(result.apiTokenId);
    expect(result.appReadWithApiToken).toBe('Space Invaders');
    expect(result.appTokenId).toMatch(/^[0-9a-f-]{36}$/);
  });
});
