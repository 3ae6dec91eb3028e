import { createSocket } from 'node:dgram';
import type { LookupAddress } from 'node:dns';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ProblemError } from '../../src/errors.js';
import { checkWebhookUrl, guardedLookup, isRefusedAddress, RefusedAddressError } from '../../src/webhooks/addresses.js';
import { type Resolve, resolutionFor } from '../../src/webhooks/resolution.js';
import { lookupsRunning, MAX_LOOKUPS } from '../../src/webhooks/lookup-slots.js';
import { createSender } from '../../src/webhooks/sender.js';

const PUBLIC_V4 = '93.184.215.14';
const PUBLIC_V6 = '2606:2800:21f:cb07:6820:80da:af6b:8b2c';

/** A resolver that knows a few names and never touches DNS. */
const fakeDns = (table: Record<string, string[]>): Resolve => async (host) => {
  const found = table[host];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return found;
};
const dns = fakeDns({
  'hooks.example.com': [PUBLIC_V4, PUBLIC_V6],
  'inward.example.com': [PUBLIC_V4, '127.0.0.1'],
  'metadata.example.com': ['169.254.169.254'],
  'mapped.example.com': ['::ffff:10.0.0.1'],
  'nothing.example.com': [],
  'localhost': ['127.0.0.1'],
  'localhost.': ['127.0.0.1'],
  'foo.localhost': ['127.0.0.1'],
});

/** The field message of a refused URL check, or null when it passed. */
const refusalOf = (check: Promise<unknown>) =>
  check.then(
    () => null,
    (error: ProblemError) => error.errors?.[0]?.message,
  );

/**
 * A DNS server on loopback (UDP) answering each query with `answer(qtype)` as its one A or AAAA
 * record, or with no answer when that is null; `answer` returning undefined leaves it unanswered.
 */
async function dnsServer(answer: (type: number) => string | null | undefined): Promise<{ address: string; close: () => void }> {
  const socket = createSocket('udp4');
  socket.on('message', (query, peer) => {
    let end = 12;
    while (end < query.length && query[end] !== 0) end += (query[end] ?? 0) + 1;
    const question = query.subarray(12, end + 5);
    const type = query.readUInt16BE(end + 1);
    const address = answer(type);
    if (address === undefined) return;
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    header.writeUInt16BE(0x8180, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(address === null ? 0 : 1, 6);
    const record = address === null ? Buffer.alloc(0) : Buffer.concat([Buffer.from([0xc0, 0x0c, 0, type, 0, 1, 0, 0, 0, 60, 0, 4]), Buffer.from(address.split('.').map(Number))]);
    socket.send(Buffer.concat([header, question, record]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { address: `127.0.0.1:${socket.address().port}`, close: () => socket.close() };
}

/** The field error a refusal carries, or null when the URL was accepted. */
async function refusal(raw: string, allowPrivate = false, resolve: Resolve = dns): Promise<string | null> {
  try {
    await checkWebhookUrl(raw, { allowPrivate, resolve });
    return null;
  } catch (err) {
    expect(err).toBeInstanceOf(ProblemError);
    const problem = err as ProblemError;
    expect(problem.code).toBe('validation_failed');
    expect(problem.status).toBe(400);
    const errors = problem.errors ?? [];
    expect(errors).toHaveLength(1);
    expect(errors[0]?.field).toBe('url');
    return errors[0]?.message ?? '';
  }
}

describe('isRefusedAddress', () => {
  it.each([
    '127.0.0.1', '127.255.255.254', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254',
    '100.64.0.1', '100.127.255.254', '0.0.0.0', '0.1.2.3', '224.0.0.1', '239.255.255.250', '255.255.255.255', '240.0.0.1',
    '192.0.2.1', '198.51.100.7', '203.0.113.9', '198.18.0.1', '192.0.0.8',
    '::1', '::', 'fe80::1', 'febf::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', 'fec0::1', '100::1', '2001:db8::1', '2001::1', '3fff::1',
    '::ffff:127.0.0.1', '::FFFF:7F00:1', '::ffff:a00:1', '::127.0.0.1', '::a9fe:a9fe', '64:ff9b::a00:1', '64:ff9b::127.0.0.1',
    '2002:a00:1::', '2002:7f00:1::1', '2002:a9fe:a9fe::', 'fe80::1%eth0', '168.63.129.16',
    '', 'example.com', '127.0.0.1/8', '1.2.3',
  ])('refuses %j', (ip) => {
    expect(isRefusedAddress(ip)).toBe(true);
  });

  it.each([PUBLIC_V4, '8.8.8.8', '1.1.1.1', '168.63.129.15', '168.63.129.17', '100.63.255.255', '100.128.0.0', '172.15.255.255', '172.32.0.0', '169.253.0.1', '223.255.255.255',
    PUBLIC_V6, '2a00:1450:4001::200e', '::ffff:8.8.8.8', '::ffff:808:808', '64:ff9b::808:808', '2002:808:808::1',
  ])('allows public %j', (ip) => {
    expect(isRefusedAddress(ip)).toBe(false);
  });
});

describe('checkWebhookUrl', () => {
  it.each([
    'http://127.0.0.1/hook', 'http://2130706433/', 'http://0x7f000001/', 'http://0x7f.0.0.1/', 'http://017700000001/', 'http://0177.0.0.01/',
    'http://127.1/', 'http://[::ffff:127.0.0.1]/', 'http://[::ffff:7f00:1]/', 'http://[::1]:8080/', 'http://[fe80::1]/',
    'http://0.0.0.0/', 'http://0/', 'http://169.254.169.254/latest/meta-data/', 'https://100.64.0.1/', 'http://10.0.0.1/',
    'http://[64:ff9b::a00:1]/', 'http://[2002:a00:1::]/', 'http://[::]/', 'http://255.255.255.255/', 'http://224.0.0.1/',
    'http://localhost/', 'http://localhost./', 'http://LOCALHOST:3000/', 'http://foo.localhost/', 'http://a.b.LocalHost./',
    'http://168.63.129.16/machine?comp=goalstate', 'http://[::ffff:168.63.129.16]/',
  ])('refuses %s as an inward target', async (raw) => {
    expect(await refusal(raw)).toMatch(/loopback, private, link-local or reserved/);
  });

  it('answered a name that resolves inward apart from one that does not resolve (an oracle of internal names): now alike', async () => {
    const answers = new Set<string | null>();
    for (const raw of ['https://inward.example.com/', 'https://metadata.example.com/', 'https://mapped.example.com/', 'https://unknown.example.com/', 'https://nothing.example.com/']) {
      answers.add(await refusal(raw));
    }
    expect([...answers]).toEqual(['must be a host name that resolves, only to public addresses']);
  });

  it('checked the length of the URL as typed, not as stored: percent-encoding made a 326-character URL 2,726', async () => {
    const typed = 'https://hooks.example.com/' + '\u20ac'.repeat(300);
    expect(typed.length).toBeLessThan(2048);
    expect(await refusal(typed)).toBe('must be at most 2048 characters');
    expect(await refusal('https://hooks.example.com/' + '"'.repeat(700) + 'x')).toBe('must be at most 2048 characters');
  });

  it('refuses port 0, which the client would read as the default port', async () => {
    expect(await refusal('http://hooks.example.com:0/')).toBe('must not use port 0');
    expect(await refusal(`http://${PUBLIC_V4}:0/`)).toBe('must not use port 0');
  });

  it.each([
    ['https://hooks.example.com/rz?x=1', 'https://hooks.example.com/rz?x=1'],
    [`http://${PUBLIC_V4}:8443/hook`, `http://${PUBLIC_V4}:8443/hook`],
    [`https://[${PUBLIC_V6}]/`, `https://[${PUBLIC_V6}]/`],
    ['HTTPS://Hooks.Example.COM', 'https://hooks.example.com/'],
    ['http://1572394766/', `http://${PUBLIC_V4}/`],
  ])('allows public %s', async (raw, href) => {
    const url = await checkWebhookUrl(raw, { allowPrivate: false, resolve: dns });
    expect(url.href).toBe(href);
  });

  it.each(['ftp://hooks.example.com/', 'file:///etc/passwd', 'javascript:alert(1)', 'data:text/plain,x', 'ws://hooks.example.com/', 'gopher://hooks.example.com/'])(
    'refuses the scheme of %s',
    async (raw) => {
      expect(await refusal(raw)).toBe('must use http or https');
    },
  );

  it.each(['https://user:pass@hooks.example.com/', 'https://user@hooks.example.com/', 'https://:pass@hooks.example.com/'])('refuses credentials in %s', async (raw) => {
    expect(await refusal(raw)).toBe('must not contain a user name or password');
  });

  it.each(['https://hooks.example.com/#x', 'https://hooks.example.com/a#', 'https://hooks.example.com/?q=1#frag'])('refuses the fragment in %s', async (raw) => {
    expect(await refusal(raw)).toBe('must not contain a fragment');
  });

  it.each(['', 'hooks.example.com/x', '/relative', 'https://', 'http://[::1/'])('refuses %j as not a URL', async (raw) => {
    expect(await refusal(raw)).toBe('must be an absolute http or https URL');
  });

  it.each(['http://exa mple.com/', ' https://hooks.example.com/', 'https://hooks.example.com/\n', 'https://hooks.exa\tmple.com/', 'https://hooks.example.com/\u007f'])(
    'refuses %j, which the parser would have changed, for its spaces or controls',
    async (raw) => {
      expect(await refusal(raw)).toBe('must not contain spaces or control characters');
    },
  );

  it('refuses an over-long URL before parsing or resolving it', async () => {
    let resolved = 0;
    const counting: Resolve = async () => {
      resolved += 1;
      return [PUBLIC_V4];
    };
    const base = 'https://hooks.example.com/';
    expect(await refusal(base + 'a'.repeat(2048 - base.length), false, counting)).toBeNull();
    expect(resolved).toBe(1);
    expect(await refusal(base + 'a'.repeat(2049 - base.length), false, counting)).toBe('must be at most 2048 characters');
    // Not even a URL: the length decides first.
    expect(await refusal('x'.repeat(5000), false, counting)).toBe('must be at most 2048 characters');
    expect(resolved).toBe(1);
  });

  it('refuses a name that does not resolve, resolves to nothing, or does not answer in time', async () => {
    expect(await refusal('https://unknown.example.com/')).toBe('must be a host name that resolves, only to public addresses');
    expect(await refusal('https://nothing.example.com/')).toBe('must be a host name that resolves, only to public addresses');
    // Answers only after the registration gave up (it would hold a lookup slot until then).
    let answer = () => {};
    const late: Resolve = () => new Promise((resolve) => (answer = () => resolve([PUBLIC_V4])));
    await expect(checkWebhookUrl('https://slow.example.com/', { allowPrivate: false, resolve: late, timeoutMs: 20 })).rejects.toMatchObject({
      code: 'validation_failed',
      errors: [{ field: 'url', message: 'must be a host name that resolves, only to public addresses' }],
    });
    answer();
  });

  it('ran a lookup for every registration at once, each holding a thread of the pool argon2 needs while its DNS never answered: now two at most', async () => {
    const UNRESOLVED = 'must be a host name that resolves, only to public addresses';
    let inFlight = 0;
    let most = 0;
    const hung: Array<() => void> = [];
    const neverAnswers: Resolve = () => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      return new Promise((resolve) =>
        hung.push(() => {
          inFlight -= 1;
          resolve([PUBLIC_V4]);
        }),
      );
    };
    const attempt = (host: string, resolve: Resolve, timeoutMs: number) =>
      checkWebhookUrl(`https://${host}/`, { allowPrivate: false, resolve, timeoutMs }).then(
        () => null,
        (error: ProblemError) => error.errors?.[0]?.message,
      );
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => attempt(`h${i}.example.com`, neverAnswers, 50)));
    expect(answers).toEqual(Array(6).fill(UNRESOLVED));
    expect(most).toBe(MAX_LOOKUPS);
    // The two lookups still hold their slots after their callers gave up: the next caller waits, and times out.
    expect(await attempt('later.example.com', neverAnswers, 50)).toBe(UNRESOLVED);
    expect(most).toBe(MAX_LOOKUPS);
    // They end: the waiters that gave up are skipped, and a new registration resolves at once.
    for (const answer of hung.splice(0)) answer();
    expect(await attempt('hooks.example.com', dns, 1000)).toBeNull();
    expect(hung).toHaveLength(0);
    expect(lookupsRunning()).toBe(0);
  });

  it('a name whose DNS server never answered held one of the two lookup slots, stalling every other user\'s registrations: public names are now DNS queries, in no slot', async () => {
    const silent = await dnsServer(() => undefined);
    const answering = await dnsServer((type) => (type === 1 ? PUBLIC_V4 : null));
    const nothing = await dnsServer(() => null);
    try {
      const strict = (servers: string[], timeoutMs: number) => ({ allowPrivate: false, dnsServers: servers, timeoutMs });
      const stalled = Array.from({ length: 4 }, (_, i) => refusalOf(checkWebhookUrl(`https://slow${i}.example.com/`, strict([silent.address], 1500))));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(lookupsRunning()).toBe(0);
      // Another user's name resolves at once, while the four wait on a server that never answers.
      const started = Date.now();
      expect((await checkWebhookUrl('https://hooks.example.com/x', strict([answering.address], 1500))).hostname).toBe('hooks.example.com');
      expect(Date.now() - started).toBeLessThan(1000);
      expect(await Promise.all(stalled)).toEqual(Array(4).fill('must be a host name that resolves, only to public addresses'));
      // The sender resolves the same way: its lookups at connect time hold no slot either.
      const sender = createSender({ allowPrivate: false, timeoutMs: 300, dnsServers: [silent.address] });
      const attempt = sender('https://hooks.example.com/x', {}, '{}', new AbortController().signal);
      expect(lookupsRunning()).toBe(0);
      expect((await attempt).error).toBe('timed out after 0.3 s');
      // A name with no address is the same reason as one resolving inward, as at registration.
      const empty = createSender({ allowPrivate: false, timeoutMs: 1000, dnsServers: [nothing.address] });
      expect((await empty('https://hooks.example.com/x', {}, '{}', new AbortController().signal)).error).toMatch(/^refused/);
    } finally {
      silent.close();
      answering.close();
      nothing.close();
    }
  });

  it('does not resolve a URL refused by its form or an IP literal', async () => {
    const failing: Resolve = () => Promise.reject(new Error('must not be called'));
    expect(await refusal('http://localhost/', false, failing)).toMatch(/loopback/);
    expect(await refusal('http://127.0.0.1/', false, failing)).toMatch(/loopback/);
    expect(await refusal(`http://${PUBLIC_V4}/`, false, failing)).toBeNull();
  });

  it('with private targets allowed, accepts loopback and private targets but still needs a resolvable name', async () => {
    for (const raw of ['http://127.0.0.1:8080/hook', 'http://[::1]/', 'http://localhost/', 'https://inward.example.com/', 'http://10.0.0.1/']) {
      expect(await refusal(raw, true)).toBeNull();
    }
    expect(await refusal('https://unknown.example.com/', true)).toBe('host name does not resolve');
    expect(await refusal('ftp://127.0.0.1/', true)).toBe('must use http or https');
    expect(await refusal('http://u:p@127.0.0.1/', true)).toBe('must not contain a user name or password');
  });
});

type LookupResult = { err: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number };

function lookupOnce(allowPrivate: boolean, host: string, options: { all?: boolean; family?: number }, resolve?: Resolve): Promise<LookupResult> {
  return new Promise((done) => {
    guardedLookup(allowPrivate, resolutionFor(allowPrivate, resolve))(host, options, (err, address, family) => done({ err, address, family }));
  });
}

describe('guardedLookup', () => {
  const rebinding = fakeDns({ 'rebind.example.com': ['127.0.0.1'], 'hooks.example.com': [PUBLIC_V6, PUBLIC_V4], 'mixed.example.com': [PUBLIC_V4, '::1'] });

  it('fails a name that now resolves to loopback, with a clear error and no address', async () => {
    for (const all of [false, true]) {
      const result = await lookupOnce(false, 'rebind.example.com', { all }, rebinding);
      expect(result.err).toBeInstanceOf(RefusedAddressError);
      expect(result.err?.code).toBe('EWEBHOOKADDRESS');
      expect(result.err?.message).toBe('rebind.example.com resolves to a loopback, private, link-local or reserved address');
    }
  });

  it('fails when any one of the addresses is refused', async () => {
    expect((await lookupOnce(false, 'mixed.example.com', { all: true }, rebinding)).err).toBeInstanceOf(RefusedAddressError);
  });

  it('answers like dns.lookup: one address and its family, or all of them', async () => {
    expect(await lookupOnce(false, 'hooks.example.com', {}, rebinding)).toEqual({ err: null, address: PUBLIC_V6, family: 6 });
    expect(await lookupOnce(false, 'hooks.example.com', { family: 4 }, rebinding)).toEqual({ err: null, address: PUBLIC_V4, family: 4 });
    expect(await lookupOnce(false, 'hooks.example.com', { all: true }, rebinding)).toEqual({
      err: null,
      address: [{ address: PUBLIC_V6, family: 6 }, { address: PUBLIC_V4, family: 4 }],
      family: undefined,
    });
  });

  it('passes resolver failures through', async () => {
    expect((await lookupOnce(false, 'unknown.example.com', {}, rebinding)).err?.code).toBe('ENOTFOUND');
  });

  it('with private targets allowed, resolves loopback', async () => {
    expect(await lookupOnce(true, 'rebind.example.com', {}, rebinding)).toEqual({ err: null, address: '127.0.0.1', family: 4 });
  });

  it('uses the system resolver by default: localhost is refused, an IP literal is judged', async () => {
    expect((await lookupOnce(false, 'localhost', { all: true })).err).toBeInstanceOf(RefusedAddressError);
    expect((await lookupOnce(false, '127.0.0.1', {})).err).toBeInstanceOf(RefusedAddressError);
    expect(await lookupOnce(false, PUBLIC_V4, {})).toEqual({ err: null, address: PUBLIC_V4, family: 4 });
    expect(await lookupOnce(true, '127.0.0.1', {})).toEqual({ err: null, address: '127.0.0.1', family: 4 });
  });

  it('plugs into node:http: the connection to a rebound name fails, and succeeds when private targets are allowed', async () => {
    const server = createServer((_req, res) => res.writeHead(204).end());
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    const get = (allowPrivate: boolean) =>
      new Promise<number | Error>((done) => {
        const req = request({ host: 'rebind.example.com', port, path: '/', lookup: guardedLookup(allowPrivate, resolutionFor(allowPrivate, rebinding)) }, (res) => {
          res.resume();
          done(res.statusCode ?? 0);
        });
        req.on('error', done);
        req.end();
      });
    try {
      const refused = await get(false);
      expect(refused).toBeInstanceOf(RefusedAddressError);
      expect(await get(true)).toBe(204);
    } finally {
      await new Promise((done) => server.close(done));
    }
  });
});
