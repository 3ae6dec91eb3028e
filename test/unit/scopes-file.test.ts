import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { parseScopesFile } from '../../src/scopes/file.js';
import { tempDir } from '../helpers/app.js';

const file = (...scopes: unknown[]) => JSON.stringify({ scopes });
const publish = { name: 'games:publish', description: 'Publish games to the catalogue.' };

describe('the scopes file', () => {
  it('reads names, descriptions and token types; token_types defaults to both', () => {
    const parsed = parseScopesFile(file(publish, { name: 'scores:board:write', description: ' Post scores. ', token_types: ['app_token'] }));
    expect(parsed).toEqual([
      { name: 'games:publish', description: 'Publish games to the catalogue.', tokenTypes: ['api_token', 'app_token'] },
      { name: 'scores:board:write', description: 'Post scores.', tokenTypes: ['app_token'] },
    ]);
    expect(parseScopesFile(file())).toEqual([]);
  });

  it('accepts exactly 500 scopes and names the count past it', () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `svc:s${i}`, description: 'x' }));
    expect(parseScopesFile(file(...many(500)))).toHaveLength(500);
    expect(() => parseScopesFile(file(...many(501)))).toThrow('501 scopes declared; at most 500 are allowed');
  });

  it.each([
    ['not JSON', '{"scopes": [', 'not valid JSON'],
    ['an array at the top', '[]', 'must be a JSON object with a "scopes" array'],
    ['no scopes array', '{"scope": []}', 'must be a JSON object with a "scopes" array'],
    ['an unknown top-level key', JSON.stringify({ scopes: [], version: 2 }), 'unknown top-level key "version"'],
  ])('refuses %s', (_what, text, message) => {
    expect(() => parseScopesFile(text)).toThrow(message);
  });

  it.each([
    ['an entry that is not an object', ['games:publish'], 'scopes[1]: must be an object'],
    ['a missing name', [{ description: 'x' }], 'scopes[1]: name must be a string'],
    ['a name without a colon', [{ name: 'games', description: 'x' }], 'scopes[1]: name must match'],
    ['a name in capitals', [{ name: 'Games:publish', description: 'x' }], 'scopes[1]: name must match'],
    ['a name with four parts', [{ name: 'a:b:c:d', description: 'x' }], 'scopes[1]: name must match'],
    ['a name part of 33 characters', [{ name: `games:${'p'.repeat(33)}`, description: 'x' }], 'scopes[1]: name must match'],
    ['a built-in name', [{ name: 'apps:read', description: 'x' }], 'scopes[1] "apps:read": is a built-in scope'],
    ['a duplicate', [{ ...publish }], 'scopes[1] "games:publish": is declared twice'],
    ['an unknown key', [{ ...publish, name: 'games:list', tokens: ['api_token'] }], 'scopes[1] "games:list": unknown key "tokens"'],
    ['a missing description', [{ name: 'games:list' }], 'scopes[1] "games:list": description must be'],
    ['a blank description', [{ name: 'games:list', description: '  ' }], 'scopes[1] "games:list": description must be'],
    ['a description of 301 characters', [{ name: 'games:list', description: 'd'.repeat(301) }], 'scopes[1] "games:list": description must be'],
    ['a description with a control character', [{ name: 'games:list', description: 'a\u001bb' }], 'scopes[1] "games:list": description must be'],
    ['an unknown token type', [{ name: 'games:list', description: 'x', token_types: ['user'] }], 'scopes[1] "games:list": token_types must be'],
    ['no token type', [{ name: 'games:list', description: 'x', token_types: [] }], 'scopes[1] "games:list": token_types must be'],
    ['token_types that is not a list', [{ name: 'games:list', description: 'x', token_types: 'api_token' }], 'scopes[1] "games:list": token_types must be'],
    ['a token type twice', [{ name: 'games:list', description: 'x', token_types: ['app_token', 'app_token'] }], 'scopes[1] "games:list": token_types lists a type twice'],
  ])('refuses %s, naming the entry', (_what, entries, message) => {
    expect(() => parseScopesFile(file(publish, ...entries))).toThrow(message);
  });
});

describe('SCOPES_FILE', () => {
  const dir = tempDir();
  afterAll(() => dir.remove());
  const write = (name: string, text: string) => {
    const path = join(dir.dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('is read once into the frozen configuration', () => {
    const config = loadConfig({ SCOPES_FILE: write('good.json', file(publish)) });
    expect(config.scopes).toEqual([{ name: 'games:publish', description: 'Publish games to the catalogue.', tokenTypes: ['api_token', 'app_token'] }]);
    expect(Object.isFrozen(config.scopes[0])).toBe(true);
    expect(loadConfig({}).scopes).toEqual([]);
  });

  it.each([
    ['a bad entry', () => write('bad.json', file(publish, publish)), /^SCOPES_FILE .*bad\.json: scopes\[1\] "games:publish": is declared twice$/],
    ['a missing file', () => join(dir.dir, 'missing.json'), /^SCOPES_FILE .*missing\.json: cannot be read \(ENOENT\)$/],
    ['a file over 1 MiB', () => write('big.json', ' '.repeat(1024 * 1024 + 1)), /^SCOPES_FILE .*big\.json: larger than/],
    // Regression: /dev/zero reports a size of 0, passed the size check, and was read for ever.
    ['a device (it reported no size and was read without end)', () => '/dev/zero', /^SCOPES_FILE \/dev\/zero: not a regular file$/],
    ['a directory', () => dir.dir, /^SCOPES_FILE .*: not a regular file$/],
  ])('refuses to start on %s, with a message naming the variable', (_what, path, message) => {
    expect(() => loadConfig({ SCOPES_FILE: path() })).toThrow(message);
  });
});
