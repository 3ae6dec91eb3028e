import type { Config } from '../config.js';
import type { Services } from '../composition-root.js';
import { CLIENT_ID, type OAuthClient } from '../oauth/clients.js';
import { noArguments, parseOnce, UsageError } from './usage.js';

type WithServices = (config: Config, run: (services: Services) => Promise<void>, access?: 'read') => Promise<void>;
type Command = (args: string[], config: Config) => Promise<void>;

export const CLIENTS_USAGE = `  clients create --id ID --name N --scopes S[,S...] [--default-scopes S[,S...]] [--max-days D]
                                         register a public client of the device flow (a CLI
                                         of the platform): a label and a ceiling on scopes
  clients list                           every client as JSON lines, the built-in rz-cli first
  clients disable <id> | enable <id>     a disabled client's pending logins fail, new ones are
                                         refused; tokens already issued stay`;

const list = (value: string | undefined): string[] => (value ?? '').split(',').map((s) => s.trim()).filter(Boolean);

const clientLine = (c: OAuthClient) =>
  JSON.stringify({ id: c.id, name: c.name, scopes: [...c.scopes], default_scopes: [...c.defaultScopes], max_days: c.maxDays, disabled: c.disabled, builtin: c.builtin, created_at: c.createdAt });

/** The one client id a command takes, checked before it is used or shown back. */
function idOf(args: string[], command: string): string {
  const { positionals } = parseOnce({ args, allowPositionals: true, options: {} });
  const [id] = positionals;
  if (positionals.length !== 1 || id === undefined || !CLIENT_ID.test(id)) throw new UsageError(`clients ${command} needs one client id (as clients list prints it)`);
  return id;
}

function toggle(disabled: boolean, withServices: WithServices): Command {
  const command = disabled ? 'disable' : 'enable';
  return async (args, config) => {
    const id = idOf(args, command);
    if (id === 'rz-cli') throw new UsageError('the built-in rz-cli cannot be disabled; set DEVICE_FLOW_ENABLED=false to turn the device flow off');
    await withServices(config, async (services) => {
      if (!(await services.device.clients.setDisabled(id, disabled))) throw new UsageError(`no client with id ${id}`);
      console.log(`${command}d ${id}`);
    });
  };
}

/** `rz-auth clients ...`: the device flow's registered clients (docs/device-flow.md). */
export function clientCommands(withServices: WithServices): Record<string, Command> {
  return {
    async 'clients create'(args, config) {
      const { values } = parseOnce({
        args,
        options: { id: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' }, 'default-scopes': { type: 'string' }, 'max-days': { type: 'string' } },
      });
      if (values.id === undefined || values.name === undefined || values.scopes === undefined) throw new UsageError('clients create needs --id, --name and --scopes');
      const maxDays = values['max-days'];
      if (maxDays !== undefined && !/^\d{1,5}$/.test(maxDays)) throw new UsageError('--max-days must be a whole number of days');
      await withServices(config, async (services) => {
        const client = await services.device.clients.create({
          id: values.id ?? '',
          name: values.name ?? '',
          scopes: list(values.scopes),
          defaultScopes: list(values['default-scopes']),
          maxDays: maxDays === undefined ? undefined : Number(maxDays),
        });
        console.log(clientLine(client));
      });
    },

    async 'clients list'(args, config) {
      noArguments(args, 'clients list');
      await withServices(config, async (services) => {
        for (const client of await services.device.clients.list()) console.log(clientLine(client));
      }, 'read');
    },

    'clients disable': toggle(true, withServices),
    'clients enable': toggle(false, withServices),
  };
}
