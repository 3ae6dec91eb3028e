import { describe, expect, it } from 'vitest';
import { isMediaType } from '../../src/http/media-type.js';

describe('isMediaType', () => {
  it.each([
    'application/json',
    'Application/JSON; Charset="UTF-8"',
    'application/json;charset=utf-8;x=y',
    'application/json; profile="a\\"b;c"',
    'application/json;;',
  ])('accepts %j', (header) => expect(isMediaType(header, 'application/json')).toBe(true));

  it.each([
    '',
    'application/jsonp',
    'application/json x',
    'application/json; charset=latin1',
    'application/json; charset="utf-8"; charset=utf-16',
    'application/json; a',
    'application/json; a="b',
    `application/json${'; a=b'.repeat(60)}`,
  ])('refuses %j', (header) => expect(isMediaType(header, 'application/json')).toBe(false));

  it('refuses a header longer than 256 characters before reading it, however well-formed', () => {
    expect(isMediaType(`application/json${';'.repeat(240)}`, 'application/json')).toBe(true);
    expect(isMediaType(`application/json${';'.repeat(10_000)}`, 'application/json')).toBe(false);
  });
});
