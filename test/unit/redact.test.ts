import { describe, expect, it } from 'vitest';
import { cutLength, redactQuoted, redactSecretParams, redactSecrets, redactStart } from '../../src/lib/redact.js';
import { generateToken } from '../../src/tokens/format.js';

describe('redactSecrets', () => {
  const api = generateToken('api');
  const app = generateToken('app');
  const jwt = 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlc2lnbmF0dXJl';

  it.each([
    ['after a space', `Bearer ${api}`],
    ['glued to a word', `x${api}`],
    ['after a percent-encoded space', `Bearer%20${api}`],
    ['after a percent-encoded quote', `%22${app}`],
    ['a service token', 'rzs_0123456789abcdefghij'],
    ['a webhook secret', 'whsec_c2VjcmV0c2Vj+/cmV0c2VjcmV0c2VjcmV0'],
    ['a JWT after a digit', `1${jwt}`],
    ['a JWT cut short of its dots', jwt.slice(0, 30)],
    ['a JWT with percent-encoded dots', jwt.replaceAll('.', '%2e')],
    ['an encoded prefix', `%72z_${api.slice(3)}`],
    ['an encoded underscore', `rza%5F${app.slice(4)}`],
    ['encoded twice', `%2572z%255F${api.slice(3)}`],
    ['split by an encoded NUL (was logged whole)', `${api.slice(0, 10)}%00${api.slice(10)}`],
    ['split by an encoded line break and a bidirectional override', `${app.slice(0, 12)}%0A%E2%80%AE${app.slice(12)}`],
    ['split by an encoded zero-width space', `${api.slice(0, 10)}%E2%80%8B${api.slice(10)}`],
    ['split by an encoded soft hyphen and a BOM', `${app.slice(0, 10)}%C2%AD${app.slice(10, 20)}%EF%BB%BF${app.slice(20)}`],
    // Regression: the pattern knew the prefixes in lower case only, and a token's body is the whole
    // secret (the prefix is public): both were logged whole.
    ['with its prefix in upper case', `RZ_${api.slice(3)}`],
    ['with its prefix in mixed case', `Rza_${app.slice(4)}`],
    ['without its prefix', api.slice(3)],
    ['without its prefix, after a percent-encoded space', `%20${app.slice(4)}`],
    ['a webhook secret in upper case', 'WHSEC_c2VjcmV0c2Vj+/cmV0c2VjcmV0c2VjcmV0'],
  ])('redacts a token %s', (_what, text) => {
    const out = redactSecrets(`/path?q=${text}&n=1`);
    expect(out).toContain('[REDACTED]');
    for (const secret of [api, app, jwt, 'c2VjcmV0c2VjcmV0']) expect(out).not.toContain(secret.slice(-10));
  });

  it('logged a token encoded five times over as it came: text still encoded after four rounds is replaced whole', () => {
    let hidden = `rz%5F${api.slice(3)}`;
    for (let i = 0; i < 4; i++) hidden = hidden.replaceAll('%', '%25');
    const out = redactSecrets(`/api/x/${hidden}`);
    expect(out).toBe('[REDACTED]');
    // Positive control: four levels are decoded and only the token is redacted.
    expect(redactSecrets(`/api/x/${hidden.replaceAll('%25', '%').replace('%5F', '%255F')}`)).toMatch(/^\/api\/x\/\[REDACTED\]$/);
  });

  it('leaves text without a token as it is, escapes included', () => {
    const uuid = '0b6f3c1e-2a4d-4c8e-9f10-5a7b3d2e1c90';
    for (const text of ['/api/me', '/api/apps?name=Space%20Invaders', '/x?a=%zz&b=%', 'rz_short', `/api/tokens/${uuid}`, `/x?q=${'a'.repeat(39)}`]) expect(redactSecrets(text)).toBe(text);
  });

  it('never throws on escapes that are not UTF-8', () => {
    expect(redactSecrets(`/x?q=%ff%fe%72z_${api.slice(3)}`)).toContain('[REDACTED]');
  });
});

describe('redactQuoted', () => {
  const api = generateToken('api');

  it('redacts text that fits as redactSecrets does', () => {
    expect(redactQuoted(`name_${api}`, 200)).toBe('name_[REDACTED]');
    expect(redactQuoted('scopes', 200)).toBe('scopes');
  });

  // Regression: a 15,600-character field name of `%c3x` cost 7 ms of event loop to redact whole,
  // to be shown in 200 characters.
  it('redacts only a start four times what is shown, marks the cut, and still redacts a token in it', () => {
    const quoted = redactQuoted(`%72z_${api.slice(3)}.${'%c3x'.repeat(3_900)}`, 200);
    expect(quoted).toBe('[REDACTED].…');
    expect(quoted).not.toContain(api.slice(3, 20));
    // One run of characters a token may be made of, longer than the cut: none of it is kept.
    expect(redactQuoted(`%72z_${api.slice(3)}${'%c3x'.repeat(3_900)}`, 200)).toBe('…');
    expect(redactQuoted('%c3x'.repeat(3_900), 200).length).toBeLessThanOrEqual(801);
  });
});

describe('redactStart', () => {
  const api = generateToken('api');
  const app = generateToken('app');
  const jwt = 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlc2lnbmF0dXJl';
  const head = '/api/me?x=1&t=';
  const encodeAll = (s: string) => [...s].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');

  // Regression: the cut was made before redacting, so a token it split kept its start, too short
  // for any pattern (`rz_` and up to 7 characters, or up to 39 of a body without its prefix).
  it.each([
    ['an API token', api],
    ['an app token', app],
    ['a token body without its prefix', api.slice(3)],
    ['a percent-encoded token', encodeAll(app)],
    ['a token split by a control character', `${api.slice(0, 9)}\u0000${api.slice(9)}`],
    ['a JWT', jwt],
    ['a webhook secret', 'whsec_c2VjcmV0c2Vj+/cmV0c2VjcmV0c2VjcmV0'],
  ])('keeps no part of %s that the cut splits, wherever it falls', (_what, secret) => {
    for (let kept = 1; kept < secret.length; kept++) {
      const out = redactStart(`${head}${secret}&n=1`, head.length + kept);
      // Either the run the cut falls in is left out, or what is kept of it is recognised whole.
      expect(out, `cut after ${kept} characters`).toMatch(/^\/api\/me\?x=1&t=(\[REDACTED\](?:[-.+/][^&]*)?)?…$/);
      expect(out.includes('[REDACTED]') ? out.replace(/\[REDACTED\][^…]*/, '') : out).toBe(`${head}…`);
    }
  });

  it('cuts where the text breaks, not inside a run that may be a secret; a run longer than the cut is left out', () => {
    expect(cutLength('abc', 10)).toBe(3);
    expect(cutLength('/api/x?a=1&b=2', 9)).toBe(9);
    expect(cutLength(`/x?q=${'a'.repeat(20)}`, 10)).toBe(5);
    expect(cutLength('a'.repeat(20), 10)).toBe(0);
    expect(redactStart(`/x?q=${'ab-'.repeat(10)}`, 11)).toBe('/x?q=ab-ab-…');
  });
});

describe('redactSecretParams', () => {
  it.each([
    ['/api/auth/login?email=a%40example.com&password=hunter2', '/api/auth/login?email=a%40example.com&password=[REDACTED]'],
    ['/x?PASSWORD=hunter2', '/x?PASSWORD=[REDACTED]'],
    ['/x?p%61ssword=hunter2&n=1', '/x?p%61ssword=[REDACTED]&n=1'],
    ['/x?new_password=a&current_password=b', '/x?new_password=[REDACTED]&current_password=[REDACTED]'],
    ['/x?client_secret=s&api_key=k&session=s&x-auth=a', '/x?client_secret=[REDACTED]&api_key=[REDACTED]&session=[REDACTED]&x-auth=[REDACTED]'],
    ['/x?pass%E2%80%8Bword=hunter2', '/x?pass%E2%80%8Bword=[REDACTED]'],
    // Regression: these were logged as they came.
    ['/x?pw=hunter2&bearer=b&sig=s', '/x?pw=[REDACTED]&bearer=[REDACTED]&sig=[REDACTED]'],
    ['/x?a=1;password=hunter2', '/x?a=1;password=[REDACTED]'],
    ['/x?password%3Dhunter2', '/x?password=[REDACTED]'],
    ['/x?user=ada%26password%3Dhunter2', '/x?user=ada&password=[REDACTED]'],
    ['http://ada:hunter2@x/api/scopes?n=1', 'http://[REDACTED]@x/api/scopes?n=1'],
  ])('replaces the value of a parameter that names a secret: %s', (url, logged) => {
    expect(redactSecretParams(url)).toBe(logged);
  });

  it('leaves other parameters, escapes that hide none, names without values and URLs without a query as they are', () => {
    for (const url of ['/api/tokens?limit=10&cursor=abc', '/x?password', '/x?password=', '/api/me', '/x?a=1&&b=2', '/x?q=a%26b', 'http://x/api/me?q=a@b']) {
      expect(redactSecretParams(url)).toBe(url);
    }
  });
});
