import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startLoad } from '../../bench/load.js';
import { parseWrkOutput, wrkScript, wrkVersion } from '../../bench/wrk.js';

/** wrk's own report, then the line the script's done() writes. */
const OUTPUT = `Running 2s test @ http://127.0.0.1:4000/api/me
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     2.10ms  300.00us   9.00ms   90.00%
  40000 requests in 2.00s, 20.00MB read
  Non-2xx or 3xx responses: 3
Requests/sec:  20000.00

RZ-BENCH-RESULT {"requests":40000,"duration_us":2000000,"status":3,"connect":0,"read":1,"write":0,"timeout":2,"cpu_s":0.412345,"latency_us":[${Array.from({ length: 1000 }, (_, i) => 1000 + i).join(',')}]}
`;

describe('the benchmark: wrk as the load generator', () => {
  it('reads answers, failures, the generator’s CPU time and the latency quantiles from the script’s line', () => {
    const result = parseWrkOutput(OUTPUT);
    expect(result).toMatchObject({ ok: 39_997, responses: 40_000, failures: 6, seconds: 2, loadGeneratorCpuSeconds: 0.412345 });
    expect(result.rps).toBeCloseTo(19_998.5, 6);
    expect(result.statusCodes).toEqual({ '< 400': 39_997, '≥ 400': 3 });
    expect(result.latencyUs.count).toBe(1000);
    expect(result.latencyUs.percentile(50)).toBeGreaterThanOrEqual(1499);
    expect(result.latencyUs.percentile(50)).toBeLessThanOrEqual(1501);
    expect(result.latencyUs.max).toBeGreaterThanOrEqual(1999);
  });

  it('records no latency when nothing was answered', () => {
    const none = OUTPUT.replace('"requests":40000', '"requests":0').replace('"status":3', '"status":0');
    expect(parseWrkOutput(none)).toMatchObject({ ok: 0, rps: 0, responses: 0 });
    expect(parseWrkOutput(none).latencyUs.count).toBe(0);
  });

  it('refuses output without the result line, or with a malformed one', () => {
    expect(() => parseWrkOutput('unable to connect to 127.0.0.1:1 Connection refused\n')).toThrow(/no result line/);
    expect(() => parseWrkOutput(OUTPUT.replace('"timeout":2', '"timeout":"x"'))).toThrow(/malformed/);
    expect(() => parseWrkOutput(OUTPUT.replace(/"latency_us":\[[^\]]*\]/, '"latency_us":[1,-2]'))).toThrow(/malformed/);
  });

  it('sends the method, the token, a form body and its type from the script, quoting nothing wrk could misread', () => {
    const script = wrkScript({ method: 'POST', path: '/api/introspect', token: 'rzs_x', form: { token: 'rz_"a\\b' }, connections: 50 });
    expect(script).toContain('wrk.method = [==[POST]==]');
    expect(script).toContain('wrk.body = [==[token=rz_%22a%5Cb]==]');
    expect(script).toContain('wrk.headers["Authorization"] = [==[Bearer rzs_x]==]');
    expect(script).toContain('wrk.headers["Content-Type"] = [==[application/x-www-form-urlencoded]==]');
    expect(wrkScript({ method: 'GET', path: '/api/me', connections: 2 })).not.toContain('wrk.body');
    expect(() => wrkScript({ method: 'POST', path: '/', body: { a: ']==]' }, connections: 1 })).toThrow();
  });

  // Bodies that each work once (bench/mfa.ts): a body sent twice would be a refusal, not a figure.
  for (const generator of ['wrk', 'autocannon'] as const) {
    it.skipIf(generator === 'wrk' && wrkVersion() === null)(`${generator} sends a list of bodies one per request, in order, never one twice, as JSON`, async () => {
      const received: string[] = [];
      const types = new Set<string | undefined>();
      const server = createServer((req, res) => {
        let body = '';
        req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        req.on('end', () => {
          received.push(body);
          types.add(req.headers['content-type']);
          res.end('{}');
        });
      }).listen(0, '127.0.0.1');
      await once(server, 'listening');
      const bodies = Array.from({ length: 100_000 }, (_, i) => JSON.stringify({ n: i }));
      const load = startLoad(generator, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, { method: 'POST', path: '/', bodies, connections: 1 }, 1);
      await load.result;
      server.close();
      // In order and never twice (wrk builds one request before the first it sends: that body is skipped).
      const sent = received.map((body) => (JSON.parse(body) as { n: number }).n);
      expect(sent.length).toBeGreaterThan(10);
      expect(sent.every((n, i) => i === 0 || n === (sent[i - 1] ?? 0) + 1)).toBe(true);
      expect(sent[0]).toBeLessThanOrEqual(1);
      expect([...types]).toEqual(['application/json']);
    });
  }
});
