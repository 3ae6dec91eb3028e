import { readFileSync } from 'node:fs';
import { createConfig, lintFromString, parseYaml } from '@redocly/openapi-core';
import spectralCore, { type RulesetDefinition } from '@stoplight/spectral-core';
import owaspRuleset from '@stoplight/spectral-owasp-ruleset';
import spectralParsers from '@stoplight/spectral-parsers';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Document, liveDocument, operationAt } from './document.js';

/**
 * The live document linted as people integrating with the service lint it: Redocly's recommended
 * rules and Spectral's OWASP API Security ruleset, both offline. Every error and warning fails,
 * except the reviewed exceptions in lint-exceptions.yaml, each of which must still match something.
 */

interface Exception {
  readonly rule: string;
  readonly reason: string;
  readonly operations?: readonly string[];
}
type Linter = 'redocly' | 'spectral';

interface Finding {
  readonly linter: Linter;
  readonly rule: string;
  readonly severity: string;
  readonly where: string;
  readonly operation: string | undefined;
  readonly message: string;
}

const EXCEPTIONS = parseYaml(readFileSync(new URL('./lint-exceptions.yaml', import.meta.url), 'utf8')) as Record<Linter, Exception[]>;

/** `#/paths/~1api~1me/get/responses` → ['paths', '/api/me', 'get', 'responses'] (RFC 6901). */
const pointerPath = (pointer: string): string[] =>
  pointer.replace(/^#\/?/, '').split('/').filter(Boolean).map((s) => decodeURIComponent(s).replaceAll('~1', '/').replaceAll('~0', '~'));

async function redocly(text: string, doc: Document): Promise<Finding[]> {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source: text, absoluteRef: 'openapi.json', config });
  return problems.map((p) => {
    const path = pointerPath(p.location[0]?.pointer ?? '');
    return { linter: 'redocly', rule: p.ruleId, severity: p.severity, where: path.join('.'), operation: operationAt(doc, path), message: p.message };
  });
}

const SEVERITIES = ['error', 'warn', 'info', 'hint'];
// Its types describe an ES module, but it is published as CommonJS, so TypeScript reads the default
// import as the whole module; at runtime both of its builds export the ruleset itself.
const owasp = owaspRuleset as unknown as RulesetDefinition;

async function spectral(text: string, doc: Document): Promise<Finding[]> {
  const linter = new spectralCore.Spectral();
  linter.setRuleset(owasp);
  const results = await linter.run(new spectralCore.Document(text, spectralParsers.Json, 'openapi.json'));
  return results.map((r) => ({
    linter: 'spectral',
    rule: String(r.code),
    severity: SEVERITIES[r.severity] ?? String(r.severity),
    where: r.path.join('.'),
    operation: operationAt(doc, r.path),
    message: r.message,
  }));
}

const covers = (e: Exception, f: Finding) => e.rule === f.rule && (e.operations === undefined || (f.operation !== undefined && e.operations.includes(f.operation)));

describe('the API document passes the linters people run on it', () => {
  let doc: Document;
  let findings: Finding[];
  beforeAll(async () => {
    const live = await liveDocument();
    doc = live.doc;
    findings = [...(await redocly(live.text, doc)), ...(await spectral(live.text, doc))].filter((f) => f.severity === 'error' || f.severity === 'warn');
  });

  it('has no error or warning outside the reviewed exceptions', () => {
    const unexpected = findings.filter((f) => !EXCEPTIONS[f.linter].some((e) => covers(e, f)));
    expect(unexpected.map((f) => `${f.linter} ${f.severity} ${f.rule} at ${f.where}: ${f.message}`)).toEqual([]);
  });

  it.each(['redocly', 'spectral'] as const)('every %s exception has a one-line reason and still matches something', (linter) => {
    for (const e of EXCEPTIONS[linter]) {
      expect(e.reason, e.rule).toMatch(/^[^\n]{20,240}$/);
      // Each operation an entry names must still need it, or the entry has outlived its reason.
      for (const scope of e.operations?.map((id) => [id]) ?? [undefined]) {
        const narrowed: Exception = scope ? { ...e, operations: scope } : e;
        expect(findings.some((f) => f.linter === linter && covers(narrowed, f)), `${e.rule} for ${scope?.[0] ?? 'the document'} matches nothing: remove it`).toBe(true);
      }
    }
  });

  it('an exception covers only the operations it names', () => {
    const scoped = EXCEPTIONS.spectral.find((e) => e.rule === 'owasp:api2:2023-write-restricted');
    expect(scoped?.operations).toEqual(['signUp', 'logIn', 'reportLeakedTokens']);
    const protectedWrite: Finding = { linter: 'spectral', rule: 'owasp:api2:2023-write-restricted', severity: 'error', where: '', operation: 'createApiToken', message: '' };
    expect(EXCEPTIONS.spectral.some((e) => covers(e, protectedWrite))).toBe(false);
  });
});
