import { type DestinationStream, pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loggerOptions, logRequest } from '../../src/http/logging.js';
import { cutLength, redactEcho, redactQuoted, redactSecretParams, redactSecrets, redactStart } from '../../src/lib/redact.js';
import { generateToken } from '../../src/lib/token-format.js';

/** `text` in full-width letters, digits and underscores (`ｒｚ＿…`): NFKC gives it back. */
const fullWidth = (text: string): string => text.replace(/[0-9A-Za-z_]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));

/** The `url` of the access line the service's logger writes for a request to `url`. */
function accessLogUrl(url: string): string {
  const lines: string[] = [];
  const stream: DestinationStream = { write: (line: string) => void lines.push(line) };
  const log = pino(loggerOptions('info', stream) as pino.LoggerOptions, stream);
  logRequest(log, { id: 'r', method: 'GET', url, status: 404, ms: 1, remote: '203.0.113.7', principal: null });
  return (JSON.parse(lines[0] ?? '{}') as { url: string }).url;
}

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
    ['a mail\'s link token (base64url)', 'rzl_q-7_Zx0-a_B9-cD_eF1-gH2_iJ3-kL4_mN5-oP6_qR'],
    ['a derived child (base64url, contract §14.4)', 'rzd_AQ-_Zx0-a_B9-cD_eF1-gH2_iJ3-kL4_mN5-oP6_qRAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
    ['a derived child in upper case', 'RZD_AQ-_Zx0-a_B9-cD_eF1-gH2_iJ3-kL4'],
    ['a link token in a URL fragment', '/developers#reset=rzl_q-7_Zx0-a_B9-cD_eF1-gH2_iJ3-kL4_mN5-oP6_qR'],
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
    // Regression: a raw (not escaped) invisible character skipped the look without them, and the
    // token was echoed in error bodies (a field name) with the character in it.
    // Split in the middle, so that neither half is long enough for a pattern of its own.
    ['split by a raw soft hyphen (was echoed as sent)', `${api.slice(0, 26)}\u00ad${api.slice(26)}`],
    ['split by a raw zero-width space', `${app.slice(0, 26)}\u200b${app.slice(26)}`],
    ['split by a raw bidirectional override', `${api.slice(0, 26)}\u202e${api.slice(26)}`],
    ['split by a raw NUL', `${app.slice(0, 26)}\u0000${app.slice(26)}`],
  ])('redacts a token %s', (_what, text) => {
    const out = redactSecrets(`/path?q=${text}&n=1`);
    expect(out).toContain('[REDACTED]');
    for (const secret of [api, app, jwt, 'c2VjcmV0c2VjcmV0', 'mN5-oP6_qR']) expect(out).not.toContain(secret.slice(-10));
  });

  it('logged a token encoded five times over as it came: text still encoded after four rounds is replaced whole', () => {
    let hidden = `rz%5F${api.slice(3)}`;
    for (let i = 0; i < 4; i++) hidden = hidden.replaceAll('%', '%25');
    const out = redactSecrets(`/api/x/${hidden}`);
    expect(out).toBe('[REDACTED]');
    // Positive control: four levels are decoded and only the token is redacted.
    expect(redactSecrets(`/api/x/${hidden.replaceAll('%25', '%').replace('%5F', '%255F')}`)).toMatch(/^\/api\/x\/\[REDACTED\]$/);
  });

  // Regression: full-width letters hid a token from the patterns, not from whoever copies it.
  it.each([
    ['in full-width letters', fullWidth(api)],
    ['in full-width letters, split by a soft hyphen', fullWidth(`${app.slice(0, 9)}\u00ad${app.slice(9)}`)],
    ['in full-width letters, percent-encoded', encodeURIComponent(fullWidth(api))],
    ['without its prefix, in full-width letters', fullWidth(api.slice(3))],
  ])('echoed a token %s as it came: now redacted', (_what, text) => {
    expect(redactSecrets(`name_${text}`)).toBe('name_[REDACTED]');
  });

  it('leaves non-ASCII text without a token as it is, not normalised', () => {
    for (const text of ['Caf\u00e9Client/2.0 (\u65e5\u672c; \ud83d\ude80)', '\uff41\uff42\uff43 full-width', `soft\u00adhyphen ${'x/'.repeat(30)}`, 'caf\u0065\u0301']) expect(redactSecrets(text)).toBe(text);
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

  // Regression: each reached the access log as sent, the password readable in it or once decoded.
  it.each([
    ['an escaped `?`', '/api/auth/login%3Femail%3Da%40b.co%26password%3Dcorrect%20horse', '/api/auth/login?email=a@b.co&password=[REDACTED]'],
    ['a `?` escaped twice', '/api/auth/login%253Femail%253Da%2540b.co%2526password%253Dcorrect%2520horse', '/api/auth/login?email=a@b.co&password=[REDACTED]'],
    ['an escaped `?` on a path that does not exist (404)', '/api/nowhere%3Fpassword%3Dhunter2', '/api/nowhere?password=[REDACTED]'],
    ['a `;` in the path', '/api/auth/login;password=hunter2', '/api/auth/login;password=[REDACTED]'],
    ['an escaped `;` in the path', '/api/auth/login%3Bpassword%3Dhunter2', '/api/auth/login;password=[REDACTED]'],
    ['a fragment', '/x?a=1#password=hunter2', '/x?a=1#password=[REDACTED]'],
    ['a parameter without a name', '/x?=password=hunter2', '/x?=password=[REDACTED]'],
    ['a parameter whose value is a pair', '/x?a=password=hunter2&n=1', '/x?a=password=[REDACTED]&n=1'],
    ['a full-width name, escaped', '/x?%EF%BD%90%EF%BD%97=hunter2', '/x?%EF%BD%90%EF%BD%97=[REDACTED]'],
  ])('logged the password behind %s as sent: now redacted', (_what, url, logged) => {
    expect(accessLogUrl(url)).toBe(logged);
    expect(redactSecretParams(url)).toBe(logged);
  });

  it('leaves other parameters, escapes that hide none, names without values and URLs without a query as they are', () => {
    const urls = ['/api/tokens?limit=10&cursor=abc', '/x?password', '/x?password=', '/api/me', '/x?a=1&&b=2', '/x?q=a%26b', 'http://x/api/me?q=a@b'];
    urls.push('/x?q=a%3Db', '/x?a=b=c', '/api/apps;v=2', '/docs#top', '/x%3Fq%3D1', '/api/apps?name=Caf%C3%A9', '/api/users/%E2%80%8B');
    for (const url of urls) {
      expect(redactSecretParams(url)).toBe(url);
      expect(accessLogUrl(url)).toBe(url);
    }
  });
});

describe('redactEcho', () => {
  const service = generateToken('service');

  it('redacts what was typed, cuts it short and removes terminal escapes', () => {
    expect(redactEcho(`Unexpected argument '${service}'`, 300)).toBe("Unexpected argument '[REDACTED]'");
    expect(redactEcho(`keys rotate ${service.slice(0, 9)}\u00ad${service.slice(9)}`, 300)).toBe('keys rotate [REDACTED]');
    expect(redactEcho(`${'x '.repeat(20)}${service}`, 50)).toBe(`${'x '.repeat(20)}…`);
    expect(redactEcho('\u001b]0;owned\u0007 keys rotat', 300)).toBe(']0;owned keys rotat');
  });
});
