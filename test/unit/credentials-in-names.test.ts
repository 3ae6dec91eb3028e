import { describe, expect, it } from 'vitest';
import type { ProblemError } from '../../src/errors.js';
import { cleanLabel, cleanText, holdsCredential } from '../../src/lib/text.js';
import { generateToken, holdsTokenBody, type OpaqueKind } from '../../src/lib/token-format.js';
import { checkWebhookUrl } from '../../src/webhooks/addresses.js';
import { flip } from '../helpers/api.js';

const KINDS: OpaqueKind[] = ['api', 'app', 'service'];
const bodyOf = (token: string) => token.slice(token.indexOf('_') + 1);
/** 49 base62 characters whose last six are not the checksum of any prefix with the first 43. */
const NOT_A_TOKEN = 'Q7mZ2xKp9LwB4vT1nRc8YhE3sJd6GfU0aXo5iNk2PqW9rMbCe';
const NO_CREDENTIAL = 'must not contain a credential (a token, a signing secret or a JWT)';
const token = generateToken('app');

describe('holdsTokenBody', () => {
  it.each(KINDS)('finds the body of a %s token at any place in a run of letters and digits, whatever its prefix', (kind) => {
    const body = bodyOf(generateToken(kind));
    for (const text of [body, `x${body}`, `${body}9`, `abcdef${body}ghijkl`, `RZ_${body}`, `rz-${body}`, `name: ${body}.`]) {
      expect(holdsTokenBody(text), text).toBe(true);
    }
  });

  it('finds nothing in runs that are not a body and its checksum', () => {
    const body = bodyOf(generateToken('api'));
    expect(holdsTokenBody(NOT_A_TOKEN)).toBe(false);
    expect(holdsTokenBody(flip(body, 48))).toBe(false);
    expect(holdsTokenBody(flip(body, 10))).toBe(false);
    expect(holdsTokenBody(body.slice(0, 48))).toBe(false);
    expect(holdsTokenBody(`${body.slice(0, 20)}-${body.slice(20)}`)).toBe(false);
    expect(holdsTokenBody('0'.repeat(5000))).toBe(false);
  });
});

describe('credentials in names and descriptions', () => {
  it('are looked for as a reader sees the text: compatibility-normalised, invisible characters removed', () => {
    const fullWidth = [...token].map((c) => String.fromCodePoint((c.codePointAt(0) ?? 0) + 0xfee0)).join('');
    // A combining mark after the last letter: NFKC would compose the two into a letter no pattern knows.
    let vowelLast = token;
    while (!/[aeiouAEIOU]$/.test(vowelLast)) vowelLast = generateToken('app');
    const marked = `${vowelLast}\u0301`;
    for (const text of [fullWidth, marked, `${token.slice(0, 9)}\u200b${token.slice(9)}`, `ＷＨＳＥＣ＿${'Ab3+'.repeat(8)}`, `Whsec_${'Ab3+'.repeat(8)}`]) {
      expect(holdsCredential(text), text).toBe(true);
      expect(cleanLabel(text, 'name', 100)).toEqual({ field: 'name', message: NO_CREDENTIAL });
      expect(cleanText(text, 'description', 1000)).toEqual({ field: 'description', message: NO_CREDENTIAL });
    }
  });

  it('include a prefixed token whose checksum fails: one mistyped character from the secret', () => {
    for (const text of [`rz_${NOT_A_TOKEN}`, `RZA_${NOT_A_TOKEN}`, `rzs_${flip(bodyOf(token), 3)}`]) expect(holdsCredential(text), text).toBe(true);
  });

  it('leave ordinary names alone, including ones with letters NFKC rewrites', () => {
    for (const name of ['deploy key', 'rz_tools', 'ｄｅｐｌｏｙ', 'ⅧⅧⅧ', NOT_A_TOKEN, `whsec_${'A'.repeat(31)}`]) expect(cleanLabel(name, 'name', 100), name).toBe(name);
    // NFKC makes four letters of each of these: still no window is a token.
    expect(cleanText('Ⅷ'.repeat(1000), 'description', 1000)).toBe('Ⅷ'.repeat(1000));
  });
});

describe('checkWebhookUrl and credentials', () => {
  const refusal = (check: Promise<unknown>) => check.then(() => null, (error: ProblemError) => error.errors?.[0]);

  it('refuses a URL holding a token before any lookup', async () => {
    const looked: string[] = [];
    const resolve = async (host: string) => {
      looked.push(host);
      return ['93.184.215.14'];
    };
    const url = `https://hooks.example.com/x?key=${bodyOf(token)}`;
    expect(await refusal(checkWebhookUrl(url, { allowPrivate: false, resolve }))).toEqual({ field: 'url', message: NO_CREDENTIAL });
    expect(looked).toEqual([]);
  });

  it('decodes escapes once without throwing, whatever they hold', async () => {
    const at = 25;
    const hidden = `${token.slice(0, at)}%${(token.codePointAt(at) ?? 0).toString(16)}${token.slice(at + 1)}`;
    for (const prefix of ['', '%FF', '%C3%28', '%E2%82', '%']) {
      const url = `https://93.184.215.14/x?a=${prefix}&k=${hidden}`;
      expect(await refusal(checkWebhookUrl(url, { allowPrivate: false })), url).toEqual({ field: 'url', message: NO_CREDENTIAL });
      expect((await checkWebhookUrl(`https://93.184.215.14/x?a=${prefix}`, { allowPrivate: false })).search).toBe(`?a=${prefix}`);
    }
  });
});
