import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { wireTypes } from '../../scripts/wire-types.js';
import { type Document, liveDocument } from './document.js';
import { messageOf, typeErrorsWith } from './type-errors.js';

/**
 * The Developers page is typed by the generated wire types (types/openapi.d.ts): it type-checks
 * against the document the service serves, and an audit event type added to the document fails
 * its typecheck until audit-text.ts has a label and a sentence for it.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WEB = join(ROOT, 'web');
const GENERATED = join(ROOT, 'types', 'openapi.d.ts');

/** The page's type errors with `generated` as types/openapi.d.ts, which is never written to disk. */
const pageTypeErrors = (generated: string): string[] =>
  typeErrorsWith(join(WEB, 'tsconfig.json'), GENERATED, generated).map((d) => `${d.file ? `${d.file.fileName.slice(ROOT.length)}: ` : ''}${messageOf(d)}`);

/** The document with one more audit event type, everywhere the audit log's types are listed. */
function withNewAuditType(doc: Document, type: string): Document {
  const text = JSON.stringify(doc).replaceAll('"webhook.created","webhook.deleted"', `"webhook.created","webhook.deleted","${type}"`);
  return JSON.parse(text) as Document;
}

describe('the Developers page, typed by the generated wire types', { timeout: 120_000 }, () => {
  let doc: Document;
  beforeAll(async () => {
    doc = (await liveDocument()).doc;
  });

  it('type-checks against the document the service serves', async () => {
    expect(pageTypeErrors(await wireTypes(doc))).toEqual([]);
  });

  it('fails to type-check when the audit log gains a type the page has no words for (positive control)', async () => {
    const drifted = withNewAuditType(doc, 'token.example');
    expect(JSON.stringify(drifted)).not.toBe(JSON.stringify(doc));
    const errors = pageTypeErrors(await wireTypes(drifted));
    expect(errors).toEqual(expect.arrayContaining([expect.stringMatching(/^web\/src\/audit-text\.ts: Property '"token\.example"' is missing/)]));
    expect(errors.every((error) => error.startsWith('web/src/audit-text.ts: '))).toBe(true);
  });
});
