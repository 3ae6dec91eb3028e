import { OPERATOR_CONTEXT } from '../audit/events.js';
import type { Config } from '../config.js';
import { ProblemError } from '../errors.js';
import type { Services } from '../composition-root.js';
import type { WebhookEndpoint } from '../webhooks/store.js';
import { deliveryJson, endpointJson } from '../webhooks/json.js';
import { noArguments, onlyId, parseOnce, UsageError } from './usage.js';

type WithServices = (config: Config, run: (services: Services) => Promise<void>, access?: 'read') => Promise<void>;
type Command = (args: string[], config: Config) => Promise<void>;

export const WEBHOOK_USAGE = `  webhooks add --url URL --events T[,T...] [--description D]
                                         an operator endpoint: everyone's events of these
                                         types; prints it with its signing secret, once
  webhooks list                          every endpoint as JSON lines (user_id null: the operator's)
  webhooks delete <id>                   delete an endpoint (anyone's) and its deliveries
  webhooks deliveries <id> [--limit N]   its deliveries with their attempts, newest first`;

/** An endpoint as a JSON line, with the user whose it is (null: the operator's). */
const endpointLine = (e: WebhookEndpoint, extra: { secret?: string } = {}) => JSON.stringify({ ...endpointJson(e), user_id: e.ownerUserId, ...extra });

/** The one endpoint id a command takes. */
function idOf(args: string[], command: string): { id: string; values: { limit?: string | undefined } } {
  const { positionals, values } = parseOnce({ args, allowPositionals: true, options: { limit: { type: 'string' } } });
  return { id: onlyId(positionals, `webhooks ${command} needs one endpoint id`), values };
}

/** A missing endpoint is the operator's mistake: exit 2, naming the id. */
async function found<T>(id: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof ProblemError && error.code === 'not_found') throw new UsageError(`no webhook endpoint with id ${id}`);
    throw error;
  }
}

/** `rz-auth webhooks ...`: the operator's endpoints, and every user's for inspection and removal. */
export function webhookCommands(withServices: WithServices): Record<string, Command> {
  return {
    async 'webhooks add'(args, config) {
      const { values } = parseOnce({ args, options: { url: { type: 'string' }, events: { type: 'string' }, description: { type: 'string' } } });
      if (values.url === undefined || values.events === undefined) throw new UsageError('webhooks add needs --url and --events (comma-separated event types)');
      const input = { url: values.url, eventTypes: values.events.split(',').map((t) => t.trim()).filter(Boolean), description: values.description };
      await withServices(config, async (services) => {
        const { endpoint, secret } = await services.webhooks.create(null, input, OPERATOR_CONTEXT);
        console.log(endpointLine(endpoint, { secret }));
      });
    },

    async 'webhooks list'(args, config) {
      noArguments(args, 'webhooks list');
      await withServices(config, async (services) => {
        for (const endpoint of await services.webhooks.list(undefined)) console.log(endpointLine(endpoint));
      }, 'read');
    },

    async 'webhooks delete'(args, config) {
      const { id } = idOf(args, 'delete');
      await withServices(config, async (services) => {
        await found(id, () => services.webhooks.delete(undefined, id, OPERATOR_CONTEXT));
        console.log(`deleted ${id}`);
      });
    },

    async 'webhooks deliveries'(args, config) {
      const { id, values } = idOf(args, 'deliveries');
      await withServices(config, async (services) => {
        const page = await found(id, () => services.webhooks.deliveries(undefined, id, { limit: values.limit }));
        for (const delivery of page.deliveries) console.log(JSON.stringify(deliveryJson(delivery)));
      }, 'read');
    },
  };
}
