import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/app.js';
import { runCli, type ServerProcess, spawnServer } from '../helpers/server-process.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Contract §9: the operator's webhook endpoints, managed with `rz-auth webhooks` (real processes)
 * beside a running server, which alone sends: the CLI records, the server delivers.
 */
describe('rz-auth webhooks', { timeout: 90_000 }, () => {
  const temp = tempDir();
  const env = { DATABASE_URL: `sqlite:${join(temp.dir, 'rz.db')}`, RATE_LIMITS: 'off', WEBHOOK_ALLOW_PRIVATE: 'true' };
  const received: Array<{ headers: Record<string, string>; body: string }> = [];
  let receiver: Server;
  let url = '';
  let server: ServerProcess | undefined;
  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200).end();
      });
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/ops`;
    server = await spawnServer(env);
  }, 60_000);
  afterAll(async () => {
    await server?.stop('SIGKILL');
    receiver.close();
    temp.remove();
  });

  const cli = async (...args: string[]) => {
    const result = await runCli(args, env);
    expect(result.code, result.stderr).toBe(0);
    return result.stdout;
  };
  const lines = (out: string) => (out === '' ? [] : out.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>));
  const until = async (what: string, done: () => boolean) => {
    const deadline = Date.now() + 30_000;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`${what} did not happen within 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it("adds an operator endpoint that receives everyone's events of its types, lists it, shows its deliveries and deletes it", async () => {
    const added = lines(await cli('webhooks', 'add', '--url', url, '--events', 'user.created, webhook.deleted', '--description', 'SIEM'))[0] ?? {};
    expect(added).toMatchObject({ id: expect.stringMatching(UUID), url, description: 'SIEM', event_types: ['user.created', 'webhook.deleted'], user_id: null });
    expect(added.secret).toMatch(/^whsec_/);
    const listed = lines(await cli('webhooks', 'list'));
    expect(listed).toEqual([{ id: added.id, url, description: 'SIEM', event_types: ['user.created', 'webhook.deleted'], created_at: added.created_at, user_id: null }]);

    const user = await runCli(['users', 'create', '--email', 'hooked@example.com', '--username', 'hooked'], env, 'correct horse battery staple\n');
    expect(user.code, user.stderr).toBe(0);
    // The running server dispatches and sends; the CLI that recorded the event does not.
    await until('the delivery', () => received.length > 0);
    const [first] = received;
    const body = JSON.parse(first?.body ?? '{}') as { type: string; data: { subject: { id: string } } };
    expect(body.type).toBe('user.created');
    expect(body.data.subject.id).toBe((JSON.parse(user.stdout) as { id: string }).id);
    expect(new Webhook(String(added.secret)).verify(first?.body ?? '', first?.headers ?? {})).toBeTruthy();

    const id = String(added.id);
    let deliveries: Array<Record<string, unknown>> = [];
    const deadline = Date.now() + 30_000;
    while (deliveries[0]?.status !== 'succeeded' && Date.now() < deadline) deliveries = lines(await cli('webhooks', 'deliveries', id, '--limit', '5'));
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ event_type: 'user.created', status: 'succeeded', attempts: [{ status_code: 200, error: null }] });

    expect(await cli('webhooks', 'delete', id)).toBe(`deleted ${id}\n`);
    expect(lines(await cli('webhooks', 'list'))).toEqual([]);
    const audit = lines(await cli('audit', 'list', '--type', 'webhook.deleted'));
    expect(audit[0]).toMatchObject({ actor: { type: 'operator', id: null }, subject: { type: 'webhook', id }, user_id: null });
  });

  it('refuses bad arguments: usage mistakes exit 2, invalid endpoints exit 1 naming the field', async () => {
    for (const [args, code, named] of [
      [['webhooks', 'add', '--url', url], 2, '--events'],
      [['webhooks', 'delete'], 2, 'endpoint id'],
      [['webhooks', 'delete', '00000000-0000-4000-8000-000000000000'], 2, 'no webhook endpoint'],
      [['webhooks', 'deliveries', 'nope'], 2, 'no webhook endpoint'],
      [['webhooks', 'add', '--url', 'ftp://example.com/x', '--events', 'user.created'], 1, 'url'],
      [['webhooks', 'add', '--url', url, '--events', 'user.stolen'], 1, 'event_types'],
    ] as const) {
      const result = await runCli([...args], env);
      expect(result.code, result.stderr).toBe(code);
      expect(result.stderr).toContain(named);
    }
  });
});
