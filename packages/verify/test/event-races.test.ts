import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { generateToken } from '../../../src/lib/token-format.js';
import type { Caller } from '../src/index.js';
import { closeAll, type Handler, json, openStream, outcome, served, signer, verifierOf } from './fake-upstream.js';
import { until } from './rz-auth.js';

/**
 * What an event changes for work already under way: a lookup started before it, a refusal cached
 * before it, a caller already handed out. A local server plays rz-auth and writes the events.
 */

afterEach(closeAll);

/** An event stream whose response the test writes to. */
function stream(): { handler: Handler; write(event: string, data: string): void } {
  let open: ServerResponse | undefined;
  let id = 0;
  return {
    handler: (req, res) => {
      openStream(req, res);
      open = res;
    },
    write: (event, data) => void open?.write(`id: ${++id}\nevent: ${event}\ndata: ${data}\n\n`),
  };
}

const apiAnswer = { active: true, token_type: 'api_token', sub: 'u1', jti: 't1', scope: 'games:publish' };

describe('events and work under way', () => {
  it('a verify() called after token.revoked joined the introspection started before it, and was accepted: now it is refused', async () => {
    const events = stream();
    const held: Array<() => void> = [];
    let hold = false;
    let answer: object = apiAnswer;
    const upstream = await served({
      '/api/events': events.handler,
      '/api/introspect': (req, res) =>
        void req.resume().on('end', () => {
          const body = JSON.stringify(answer);
          const send = () => void res.writeHead(200, { 'content-type': 'application/json' }).end(body);
          if (hold) held.push(send);
          else send();
        }),
    });
    const verifier = verifierOf(upstream.url);
    await until(() => verifier.streaming, 'the stream is up');
    // Another value answered as the same token, cached: its refusal shows the event was applied.
    const other = `Bearer ${generateToken('api')}`;
    expect(await outcome(verifier.verify(other))).toBe('accepted');
    hold = true;
    const token = generateToken('api');
    const before = outcome(verifier.verify(`Bearer ${token}`));
    await until(() => held.length === 1, 'the introspection is under way');
    answer = { active: false };
    events.write('token.revoked', '{"token_id":"t1"}');
    await expect.poll(() => outcome(verifier.verify(other)), { timeout: 3000, interval: 20 }).toBe('invalid_token');
    const after = outcome(verifier.verify(`Bearer ${token}`));
    await until(() => held.length === 2, 'a second introspection is under way');
    for (const send of held) send();
    // Asked before the revocation: either answer is right. Asked after: refused.
    expect(await before).toBe('accepted');
    expect(await after).toBe('invalid_token');
  });

  it('a user token of a key not yet fetched stayed refused for a minute after keys.changed: now it verifies', async () => {
    const [k1, k2] = [await signer('k1'), await signer('k2')];
    let keys = [k1.jwk];
    const events = stream();
    const exp = Math.floor(Date.now() / 1000) + 600;
    const upstream = await served({
      '/api/events': events.handler,
      '/.well-known/jwks.json': json(() => ({ keys })),
      '/api/introspect': json(() => ({ active: true, token_type: 'user', sub: 'u1', jti: 's2', scope: '*', exp })),
    });
    const verifier = verifierOf(upstream.url);
    await until(() => verifier.streaming, 'the stream is up');
    await outcome(verifier.verify(`Bearer ${await k1.sign({ sub: 'u1', sid: 's1', exp })}`));
    // rz-auth rotates and signs with k2 at once; a token of k2 arrives before the event, within the cooldown.
    keys = [k1.jwk, k2.jwk];
    const fresh = await k2.sign({ sub: 'u1', sid: 's2', exp });
    expect(await outcome(verifier.verify(`Bearer ${fresh}`))).toBe('invalid_token');
    const fetched = upstream.count('/.well-known/jwks.json');
    events.write('keys.changed', '{}');
    await until(() => upstream.count('/.well-known/jwks.json') > fetched, 'the key set is fetched again');
    // The new key set is in use once its answer is read, a moment after the request.
    await expect.poll(() => outcome(verifier.verify(`Bearer ${fresh}`)), { timeout: 3000, interval: 20 }).toBe('accepted');
  });

  it('a user token refused while the key set announced by keys.changed was still being fetched stayed refused for a minute: now it verifies once the set is in use', async () => {
    const [k1, k2] = [await signer('k1'), await signer('k2')];
    let keys = [k1.jwk];
    const held: Array<() => void> = [];
    let hold = false;
    const events = stream();
    const exp = Math.floor(Date.now() / 1000) + 600;
    const upstream = await served({
      '/api/events': events.handler,
      '/.well-known/jwks.json': (req, res) =>
        void req.resume().on('end', () => {
          const body = JSON.stringify({ keys });
          const send = () => void res.writeHead(200, { 'content-type': 'application/json' }).end(body);
          if (hold) held.push(send);
          else send();
        }),
      '/api/introspect': json(() => ({ active: true, token_type: 'user', sub: 'u1', jti: 's2', scope: '*', exp })),
    });
    const verifier = verifierOf(upstream.url);
    await until(() => verifier.streaming, 'the stream is up');
    await outcome(verifier.verify(`Bearer ${await k1.sign({ sub: 'u1', sid: 's1', exp })}`));
    keys = [k1.jwk, k2.jwk];
    const fresh = `Bearer ${await k2.sign({ sub: 'u1', sid: 's2', exp })}`;
    hold = true;
    events.write('keys.changed', '{}');
    await until(() => held.length === 1, 'the new key set is being fetched');
    // Checked on the old key set, which lacks k2: refused, and that refusal must not outlive it.
    expect(await outcome(verifier.verify(fresh))).toBe('invalid_token');
    held[0]?.();
    await expect.poll(() => outcome(verifier.verify(fresh)), { timeout: 3000, interval: 20 }).toBe('accepted');
  });

  it('a cached caller was one mutable object: a handler that added a scope gave it to every later request with the token; now it is frozen', async () => {
    const upstream = await served({ '/api/events': openStream, '/api/introspect': json(() => ({ ...apiAnswer, scope: '' })) });
    const verifier = verifierOf(upstream.url);
    await until(() => verifier.streaming, 'the stream is up');
    const token = generateToken('api');
    const first = await verifier.verify(`Bearer ${token}`);
    expect(() => (first.scopes as string[]).push('games:publish')).toThrow(TypeError);
    expect(() => ((first as { userId: string }).userId = 'u2')).toThrow(TypeError);
    const second: Caller = await verifier.verify(`Bearer ${token}`);
    expect([second.userId, second.scopes]).toEqual(['u1', []]);
    expect(() => verifier.requireScopes(second, 'games:publish')).toThrow(expect.objectContaining({ code: 'insufficient_scope' }));
    expect(upstream.count('/api/introspect')).toBe(1);
  });
});
