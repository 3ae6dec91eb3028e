import { createHmac } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { generateToken } from '../src/lib/token-format.js';
import { attenuate, chainHolds, derivationKey, derive, effectiveRights, readChild, summarize } from '../packages/token/src/index.js';
import { ROOT } from '../test/helpers/server-process.js';

/*
 * `npm run bench:token`: what @rz-auth/token's functions cost on one core, with no server: the
 * figures behind contract §14.10's "derive() and attenuate() ≥ 50,000 per second on one core" and
 * §14.9's "malformed children are refused for less than a valid verification costs". Each row is
 * measured in slices interleaved with the others' (so a machine's jumps land on every row alike),
 * as CPU time per call (this process's user + system time, which other tenants hardly move).
 * Exit status 0 whatever the figures; see bench/README.md.
 */

const NOW = Math.floor(Date.now() / 1000);
const parent = generateToken('api');
const key = derivationKey(parent);
const deriveOptions = { ttl: '15m', scopes: ['games:publish'], aud: ['publishing-api'], label: 'ci run 4411' } as const;
/** Five caveats: iat, exp, scopes, aud, label (the contract's "typical child"). */
const child = derive(parent, deriveOptions);
const facts = { scopes: ['games:publish', 'tokens:read'], expiresAt: null, allowedCidrs: null, childrenRevokedBefore: null };
const forged = (body: string): string => `rzd_${body}`;

function verify(token: string): boolean {
  const read = readChild(token);
  return read !== null && chainHolds(read, key) && effectiveRights(summarize(read.caveats), facts, { now: NOW, maxTtl: 604_800 }) !== null;
}

interface Row {
  readonly id: string;
  readonly what: string;
  readonly run: () => unknown;
  /** Operations per CPU-second to reach, or whether every slice must cost less than a valid verification. */
  readonly target: number | 'below-verify';
}

const hmacKey = new Uint8Array(32);
const hmacMessage = new Uint8Array(40);

const ROWS: readonly Row[] = [
  // The floor the format sets: derive() makes 8 of these for 5 caveats (parent_ref, dk, t0, one per
  // caveat), attenuate() one per caveat appended. It reads how fast this machine is right now.
  { id: 'hmac', what: 'one HMAC-SHA256 of 40 bytes (node:crypto): derive() needs 8, attenuate() 2', run: () => createHmac('sha256', hmacKey).update(hmacMessage).digest(), target: 0 },
  { id: 'derive', what: 'derive(): 5 caveats (iat, exp, scopes, aud, label)', run: () => derive(parent, deriveOptions), target: 50_000 },
  { id: 'attenuate', what: 'attenuate(): 2 caveats (exp, aud) onto that child', run: () => attenuate(child, { ttl: 60, aud: ['publishing-api'] }), target: 50_000 },
  { id: 'verify', what: 'valid child: readChild + chainHolds + effectiveRights', run: () => verify(child), target: 0 },
  { id: 'refuse-4097', what: 'refused: 4,097 characters', run: () => readChild(forged('A'.repeat(4093))), target: 'below-verify' },
  { id: 'refuse-17', what: 'refused: 17 caveats', run: () => readChild(seventeen), target: 'below-verify' },
  { id: 'refuse-513', what: 'refused: a 513-byte caveat', run: () => readChild(oversizeCaveat), target: 'below-verify' },
  { id: 'refuse-garbage', what: 'refused: a valid head, then garbage to the end (the typical child\'s length)', run: () => readChild(garbage), target: 'below-verify' },
];

/** A body with n = 17 behind a valid version byte, and one whose first caveat claims 513 bytes; both as long as the typical child. */
const bodyBytes = Buffer.from(child.slice(4, -6), 'base64url');
const patched = (offset: number, bytes: number[]): string => {
  const body = Buffer.from(bodyBytes);
  body.set(bytes, offset);
  return child.slice(0, 4) + body.toString('base64url') + child.slice(-6);
};
const seventeen = patched(33, [17]);
const oversizeCaveat = patched(34, [2, 1]);
const garbage = child.slice(0, 52) + 'A'.repeat(child.length - 58) + child.slice(-6);

const SLICES = Number(process.env.RZ_BENCH_TOKEN_SLICES ?? 10);
const SLICE_MS = 300;

/** One slice of `row`: calls in batches until SLICE_MS of wall time; CPU µs per call. */
function slice(row: Row): number {
  const cpu = process.cpuUsage();
  const end = performance.now() + SLICE_MS;
  let calls = 0;
  while (performance.now() < end) {
    for (let i = 0; i < 200; i++) row.run();
    calls += 200;
  }
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / calls;
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const quartiles = (xs: readonly number[]): [number, number] => {
  const s = [...xs].sort((a, b) => a - b);
  return [s[Math.floor(s.length / 4)] ?? NaN, s[Math.floor((3 * s.length) / 4)] ?? NaN];
};

function main(): void {
  console.log(`@rz-auth/token benchmark: ${SLICES} slices of ${SLICE_MS} ms per row, interleaved`);
  console.log(`machine: ${cpus()[0]?.model ?? 'unknown'}, Node ${process.version}, load average ${loadavg()[0]?.toFixed(2)}`);
  for (const row of ROWS) for (let i = 0; i < 3; i++) slice(row);
  const samples = new Map(ROWS.map((row) => [row.id, [] as number[]]));
  for (let s = 0; s < SLICES; s++) for (const row of ROWS) samples.get(row.id)?.push(slice(row));
  const verifyUs = median(samples.get('verify') ?? []);
  const results = ROWS.map((row) => {
    const us = samples.get(row.id) ?? [];
    const [q1, q3] = quartiles(us);
    const perSecond = 1e6 / median(us);
    const worst = Math.max(...us);
    const verdict = row.target === 'below-verify' ? (worst < verifyUs ? 'ok' : 'MISS') : row.target === 0 ? '' : perSecond >= row.target ? 'ok' : 'MISS';
    const target = row.target === 'below-verify' ? `every slice < verify's median (${verifyUs.toFixed(2)} µs)` : row.target === 0 ? '' : `≥ ${row.target.toLocaleString('en')}/s`;
    return { id: row.id, what: row.what, cpuUsPerCall: median(us), middleHalf: [q1, q3], worstSlice: worst, perCpuSecond: Math.round(perSecond), target, verdict };
  });
  console.log(`\n${'row'.padEnd(15)} ${'CPU µs/call'.padStart(11)} ${'middle half'.padStart(13)} ${'worst'.padStart(7)} ${'calls/CPU-s'.padStart(12)}  target`);
  for (const r of results) {
    const half = `${r.middleHalf[0]?.toFixed(2)}–${r.middleHalf[1]?.toFixed(2)}`;
    console.log(`${r.id.padEnd(15)} ${r.cpuUsPerCall.toFixed(2).padStart(11)} ${half.padStart(13)} ${r.worstSlice.toFixed(2).padStart(7)} ${r.perCpuSecond.toLocaleString('en').padStart(12)}  ${r.target} ${r.verdict}`.trimEnd());
  }
  for (const r of results) console.log(`  ${r.id}: ${r.what}`);
  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'token-latest.json'), `${JSON.stringify({ date: new Date().toISOString(), node: process.version, loadAverage: loadavg()[0], slices: SLICES, sliceMs: SLICE_MS, rows: results }, null, 2)}\n`);
}

main();
