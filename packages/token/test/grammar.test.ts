import { describe, expect, it } from 'vitest';
import { inspect, readChild } from '../src/index.js';
import { apiToken, forge } from './forge.js';

/**
 * Contract §14.4 and §14.5, grammar and bounds: everything here is refused by readChild, which
 * takes no key, so none of it reaches an HMAC or a lookup. Each forged child has a correct chain,
 * so only the rule under test can refuse it.
 */

const parent = apiToken();
const IAT = '{"iat":1800000000}';
const EXP = '{"exp":1800000900}';
const child = (...caveats: (string | Uint8Array)[]) => forge({ parent, caveats: [IAT, EXP, ...caveats] });

describe('a well-formed child (positive control)', () => {
  it('with every caveat type is read', () => {
    const ok = child('{"nbf":1800000000}', '{"scopes":[]}', '{"scopes":["games:publish","tokens:read"]}', '{"aud":["rz-auth","scoreboard"]}',
      '{"cidrs":["10.0.0.0/8","2001:db8::/32","::ffff:10.1.2.3","0.0.0.0/0"]}', '{"label":"ci run 4411 › test agent"}', '{"rl":{"q":5,"w":60}}', IAT, EXP);
    expect(readChild(ok)?.caveats).toHaveLength(11);
    expect(inspect(ok).labels).toEqual(['ci run 4411 › test agent']);
  });
});

describe('refused before any HMAC', () => {
  const refused = (why: string, token: string) => expect(readChild(token), why).toBeNull();

  it('an unknown caveat key, two members in one object, a duplicate key, or not an object', () => {
    for (const caveat of ['{"sub":"x"}', '{"exp":1800000900,"nbf":1}', '{"exp":1800000900,"exp":1800000901}', '["exp",1]', '"exp"', 'null', '{}', '{"__proto__":{"exp":1}}'])
      refused(caveat, child(caveat));
  });

  it('a time written other than as plain decimal digits, or out of range', () => {
    for (const value of ['1e9', '1.5', '1800000900.0', '-1', '+1', '01800000900', '"1800000900"', 'true', '253402300800', '1E9'])
      refused(value, child(`{"nbf":${value}}`));
    refused('exp 1e9', forge({ parent, caveats: [IAT, '{"exp":1e9}'] }));
  });

  it('any encoding but the caveat\'s one: whitespace, escapes where none are needed, invalid UTF-8, a BOM', () => {
    for (const caveat of ['{ "nbf":1}', '{"nbf": 1}', '{"nbf":1} ', '{"label":"\\u0061"}', '{"label":"a\\/b"}', '{"rl":{"w":60,"q":5}}', '{"aud":["a" ,"b"]}'])
      refused(caveat, child(caveat));
    refused('invalid UTF-8', child(Buffer.from([0x7b, 0x22, 0x6c, 0x61, 0x62, 0x65, 0x6c, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d])));
    refused('BOM', child(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"nbf":1}')])));
  });

  it('a label with a control character, empty, blank, longer than 100 characters or padded', () => {
    for (const label of ['a\\u0007b', 'a\\nb', 'a\\u0000', 'a\u0085b', 'a\u202eb', '', ' ', '\u200b', 'x'.repeat(101), ' x', 'x '])
      refused(JSON.stringify(label), child(`{"label":"${label}"}`));
    expect(readChild(child(`{"label":"${'é'.repeat(100)}"}`))).not.toBeNull();
  });

  it('values outside each caveat\'s grammar and counts', () => {
    const bad = [
      '{"scopes":["Games:publish"]}', '{"scopes":["games"]}', `{"scopes":${JSON.stringify(Array(51).fill('a:b'))}}`, '{"scopes":"a:b"}',
      '{"aud":[]}', `{"aud":${JSON.stringify(Array.from({ length: 21 }, (_, i) => `s${i}`))}}`, '{"aud":[""]}', '{"aud":[7]}',
      '{"cidrs":[]}', '{"cidrs":["10.0.0.0/33"]}', '{"cidrs":["10.0.0.256"]}', '{"cidrs":["010.0.0.1"]}', '{"cidrs":["fe80::1%eth0"]}',
      '{"cidrs":["1::2::3"]}', '{"cidrs":["2001:db8::/129"]}', '{"cidrs":["10.0.0.0/08"]}', '{"cidrs":["example.com"]}',
      '{"rl":{"q":0,"w":60}}', '{"rl":{"q":1000001,"w":60}}', '{"rl":{"q":5,"w":86401}}', '{"rl":{"q":5}}', '{"rl":{"q":5,"w":60,"x":1}}', '{"rl":[5,60]}',
    ];
    for (const caveat of bad) refused(caveat, child(caveat));
  });

  it('a first caveat that is not iat, and no exp at all', () => {
    refused('exp first', forge({ parent, caveats: [EXP, IAT] }));
    refused('label first', forge({ parent, caveats: ['{"label":"x"}', IAT, EXP] }));
    refused('no exp', forge({ parent, caveats: [IAT, '{"label":"x"}'] }));
  });

  it('a 513-byte caveat, 0, 1 or 17 caveats, a count that disagrees with the caveats, another version', () => {
    const label = (bytes: number) => `{"label":"${'x'.repeat(bytes - 12)}"}`;
    expect(label(512)).toHaveLength(512);
    refused('513 bytes', child(label(513)));
    refused('17 caveats', child(...Array(15).fill('{"label":"x"}')));
    expect(readChild(child(...Array(14).fill('{"label":"x"}')))).not.toBeNull();
    refused('1 caveat', forge({ parent, caveats: [IAT] }));
    refused('n = 3 of 2', forge({ parent, caveats: [IAT, EXP], count: 3 }));
    refused('n = 1 of 2', forge({ parent, caveats: [IAT, EXP], count: 1 }));
    refused('an empty caveat', child(''));
    refused('version 2', forge({ parent, caveats: [IAT, EXP], version: 2 }));
    refused('version 0', forge({ parent, caveats: [IAT, EXP], version: 0 }));
  });

  it('4,097 characters, a bad checksum, a wrong prefix, extra separators, truncation, odd base64url', () => {
    const ok = child('{"label":"x"}');
    const long = child(...Array(8).fill(`{"label":"${'x'.repeat(100)}"}`), `{"label":"${'x'.repeat(99)}"}`);
    expect(long.length).toBeGreaterThan(1500);
    refused('4,097 characters', `rzd_${'A'.repeat(4087)}${ok.slice(-6)}`);
    const sum = ok.slice(-6);
    const flippedSum = sum.slice(0, 5) + (sum[5] === 'a' ? 'b' : 'a');
    for (const bad of [ok.slice(0, -6) + flippedSum, ok.replace('rzd_', 'rz_'), ok.replace('rzd_', 'RZD_'), `rzd_${ok}`, `${ok}_`, `${ok}.x`, ` ${ok}`, `${ok}\n`,
      ok.slice(0, -1), ok.slice(0, 120), ok.slice(0, -7) + ok.slice(-6), `${ok.slice(0, 40)}=${ok.slice(40)}`, `${ok.slice(0, 40)}+${ok.slice(41)}`])
      refused(bad.slice(0, 12), bad);
    for (const input of [undefined, null, 7, {}, ['rzd_'], '']) expect(readChild(input)).toBeNull();
  });
});
