import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/server-process.js';
import { cliJsonLines, verified, webhookProcesses } from '../helpers/webhooks.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Contract §9: the operator's webhook endpoints, managed with `rz-auth webhooks` (real processes)
 * beside a running server, which alone sends: the CLI records, the server delivers.
 */
describe('rz-auth webhooks', { timeout: 90_000 }, () => {
  const block = webhookProcesses('sqlite', 'answer');
  const cli = (...args: string[]) => cliJsonLines(args, block.env);

  it("adds an operator endpoint that receives everyone's events of its types, lists it, shows its deliveries and deletes it", async () => {
    await block.start();
    const url = `${block.receiver().url}/ops`;
    const [added = {}] = await cli('webhooks', 'add', '--url', url, '--events', 'user.created, webhook.deleted', '--description', 'SIEM');
    expect(added).toMatchObject({ id: expect.stringMatching(UUID), url, description: 'SIEM', event_types: ['user.created', 'webhook.deleted'], user_id: null });
    expect(added.secret).toMatch(/^whsec_/);
    expect(await cli('webhooks', 'list')).toEqual([{ id: added.id, url, description: 'SIEM', event_types: ['user.created', 'webhook.deleted'], created_at: added.created_at, user_id: null }]);

    const user = await runCli(['users', 'create', '--email', 'hooked@example.com', '--username', 'hooked'], block.env, 'correct horse battery staple\n');
    expect(user.code, user.stderr).toBe(0);
    // The running server dispatches and sends; the CLI that recorded the event does not.
    const received = () => block.receiver().answered.filter((r) => r.path === '/ops');
    await block.receiver().waitFor('the delivery', () => received().length > 0);
    const body = verified(String(added.secret), received()[0] ?? { path: '', headers: {}, body: '', at: 0 });
    expect(body).toMatchObject({ type: 'user.created', data: { subject: { id: (JSON.parse(user.stdout) as { id: string }).id } } });

    const id = String(added.id);
    let deliveries: Array<Record<string, unknown>> = [];
    const deadline = Date.now() + 30_000;
    while (deliveries[0]?.status !== 'succeeded' && Date.now() < deadline) deliveries = await cli('webhooks', 'deliveries', id, '--limit', '5');
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ event_type: 'user.created', status: 'succeeded', attempts: [{ status_code: 204, error: null }] });

    const deleted = await runCli(['webhooks', 'delete', id], block.env);
    expect(deleted.stdout).toBe(`deleted ${id}\n`);
    expect(await cli('webhooks', 'list')).toEqual([]);
    const [audit] = await cli('audit', 'list', '--type', 'webhook.deleted');
    expect(audit).toMatchObject({ actor: { type: 'operator', id: null }, subject: { type: 'webhook', id }, user_id: null });
  });

  it('refuses bad arguments: usage mistakes exit 2, invalid endpoints exit 1 naming the field', async () => {
    const url = `${block.receiver().url}/ops`;
    for (const [args, code, named] of [
      [['webhooks', 'add', '--url', url], 2, '--events'],
      [['webhooks', 'delete'], 2, 'endpoint id'],
      [['webhooks', 'delete', '00000000-0000-4000-8000-000000000000'], 2, 'no webhook endpoint'],
      // Regression: an id that is not one was echoed back (100 KB, or terminal control bytes).
      [['webhooks', 'deliveries', 'nope\u001b[2J'], 2, 'needs one endpoint id (one UUID'],
      [['webhooks', 'add', '--url', 'ftp://example.com/x', '--events', 'user.created'], 1, 'url'],
      [['webhooks', 'add', '--url', url, '--events', 'user.stolen'], 1, 'event_types'],
    ] as const) {
      const result = await runCli([...args], block.env);
      expect(result.code, result.stderr).toBe(code);
      expect(result.stderr).toContain(named);
    }
  });

  it('echoed a token given as an event type to stderr (its first 60 characters): now redacted, an unknown type still named', async () => {
    const url = `${block.receiver().url}/ops`;
    const token = `rzs_${'Q7x'.repeat(16)}k`;
    const leaked = await runCli(['webhooks', 'add', '--url', url, '--events', `user.created,${token}`], block.env);
    expect(leaked.code, leaked.stderr).toBe(1);
    expect(leaked.stderr).toContain('event_types: has an unknown event type: [REDACTED]');
    expect(leaked.stderr).not.toContain(token.slice(4, 20));
    // Positive control: an unknown type that holds no token is named as typed.
    const named = await runCli(['webhooks', 'add', '--url', url, '--events', 'user.stolen'], block.env);
    expect(named.stderr).toContain('event_types: has an unknown event type: user.stolen');
  });
});
