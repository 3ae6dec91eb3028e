import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { verifyAssertion, verifyRegistration } from '../src/account/mfa/webauthn-ceremonies.js';
import type { WebAuthnCredential } from '../src/account/mfa/webauthn-store.js';
import { FLAG, SoftAuthenticator } from '../test/helpers/webauthn-authenticator.js';
import { ROOT } from '../test/helpers/server-process.js';
import { WEBAUTHN_RP } from './env.js';

/*
 * `npm run bench:assertion`: what checking one WebAuthn assertion costs on one core, with no server
 * and no store: the figure behind contract §12.11's "WebAuthn assertion verification ≤ 3 ms CPU
 * median". What is timed is verifyAssertion (src/account/mfa/webauthn-ceremonies.ts), the check
 * every passkey login, second step and step-up by key makes: client data (type, challenge, origin),
 * authenticator data (RP id hash, flags), the COSE key and the signature. Taking the challenge and
 * recording the counter are store writes, measured with the rest of a login by the `passkey-login`
 * row of `npm run bench`. CPU time is this process's user + system time, every thread (WebCrypto
 * verifies on libuv's pool), per call; rows are measured in interleaved slices, as bench/token.ts.
 * Exit status 0 whatever the figures; see bench/README.md.
 */

const RP = { rpId: WEBAUTHN_RP.id, rpName: 'rz-auth bench', origins: [WEBAUTHN_RP.origin] };
const TARGET_US = 3000;
const SLICES = Number(process.env.RZ_BENCH_ASSERTION_SLICES ?? 10);
const SLICE_MS = 300;
/** Distinct assertions per row, cycled: each its own challenge and signature. */
const POOL = 64;

interface Row {
  readonly id: string;
  readonly what: string;
  readonly call: (i: number) => Promise<unknown>;
}

const challenge = (): string => randomBytes(32).toString('base64url');

/** A credential registered through verifyRegistration, as enrolment stores it, and POOL assertions by it. */
async function row(id: string, alg: -7 | -8, what: string): Promise<Row> {
  const auth = new SoftAuthenticator(randomBytes(32).toString('base64url'), alg);
  const created = challenge();
  const registered = await verifyRegistration(RP, auth.register({ challenge: created, origin: WEBAUTHN_RP.origin, rpId: WEBAUTHN_RP.id }), created);
  if (!registered) throw new Error(`${id}: the registration was refused`);
  const credential: WebAuthnCredential = { ...registered, id: 'factor', userId: 'user', name: 'Bench', createdAt: new Date().toISOString(), lastUsedAt: null, cloneSuspectedAt: null };
  const pool = Array.from({ length: POOL }, () => {
    const c = challenge();
    return { challenge: c, response: auth.assert({ challenge: c, origin: WEBAUTHN_RP.origin, rpId: WEBAUTHN_RP.id, flags: FLAG.UP | FLAG.UV }) as AuthenticationResponseJSON };
  });
  const call = async (i: number) => {
    const { challenge: c, response } = pool[i % POOL] as (typeof pool)[number];
    const verified = await verifyAssertion(RP, response, { challenge: c, credential, requireUserVerification: true, userHandle: auth.userHandle });
    if (!verified) throw new Error(`${id}: an assertion was refused`);
  };
  return { id, what, call };
}

/** One slice of `r`: calls one after another until SLICE_MS of wall time; CPU µs per call. */
async function slice(r: Row): Promise<number> {
  const cpu = process.cpuUsage();
  const end = performance.now() + SLICE_MS;
  let calls = 0;
  while (performance.now() < end) await r.call(calls++);
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / calls;
}

const sorted = (xs: readonly number[]): number[] => [...xs].sort((a, b) => a - b);
const at = (xs: readonly number[], q: number): number => sorted(xs)[Math.floor(q * xs.length)] ?? NaN;

async function main(): Promise<void> {
  console.log(`WebAuthn assertion benchmark: ${SLICES} slices of ${SLICE_MS} ms per row, interleaved`);
  console.log(`machine: ${cpus()[0]?.model ?? 'unknown'}, Node ${process.version}, load average ${loadavg()[0]?.toFixed(2)}`);
  const rows = [await row('es256', -7, 'ES256 (P-256), passkey login: UV required, user handle'), await row('eddsa', -8, 'EdDSA (Ed25519), the same')];
  for (const r of rows) for (let i = 0; i < 3; i++) await slice(r);
  const samples = new Map(rows.map((r) => [r.id, [] as number[]]));
  for (let s = 0; s < SLICES; s++) for (const r of rows) samples.get(r.id)?.push(await slice(r));
  const results = rows.map((r) => {
    const us = samples.get(r.id) ?? [];
    const median = at(us, 0.5);
    return { id: r.id, what: r.what, cpuUsPerCall: median, middleHalf: [at(us, 0.25), at(us, 0.75)], worstSlice: Math.max(...us), target: `≤ ${TARGET_US} µs median`, verdict: median <= TARGET_US ? 'ok' : 'MISS' };
  });
  console.log(`\n${'row'.padEnd(8)} ${'CPU µs/call'.padStart(11)} ${'middle half'.padStart(15)} ${'worst'.padStart(8)}  target`);
  for (const r of results) {
    const half = `${r.middleHalf[0]?.toFixed(1)}–${r.middleHalf[1]?.toFixed(1)}`;
    console.log(`${r.id.padEnd(8)} ${r.cpuUsPerCall.toFixed(1).padStart(11)} ${half.padStart(15)} ${r.worstSlice.toFixed(1).padStart(8)}  ${r.target} ${r.verdict}`);
  }
  for (const r of results) console.log(`  ${r.id}: ${r.what}`);
  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'assertion-latest.json'), `${JSON.stringify({ date: new Date().toISOString(), node: process.version, loadAverage: loadavg()[0], slices: SLICES, sliceMs: SLICE_MS, rows: results }, null, 2)}\n`);
}

await main();
