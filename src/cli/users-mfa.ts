import type { Config } from '../config.js';
import type { Services } from '../composition-root.js';
import { parseOnce, UsageError } from './usage.js';

type WithServices = (config: Config, run: (services: Services) => Promise<void>, access?: 'read') => Promise<void>;
type Command = (args: string[], config: Config) => Promise<void>;

export const USERS_MFA_USAGE = `  users mfa-reset <email|username>       for a user locked out of their second factors: removes
                                         every factor and recovery code, ends every session, and
                                         tells the user (audit, webhook, mail); prints a JSON line`;

/** `rz-auth users mfa-reset` (docs/mfa.md, "Operator reset"). */
export function usersMfaCommands(withServices: WithServices): Record<string, Command> {
  return {
    async 'users mfa-reset'(args, config) {
      const { positionals } = parseOnce({ args, allowPositionals: true });
      if (positionals.length !== 1 || !positionals[0]?.trim()) throw new UsageError('users mfa-reset needs one email or username');
      const login = positionals[0];
      await withServices(config, async (services) => {
        const outcome = await services.mfa.operatorReset.reset(login);
        if (!outcome) throw new UsageError(`no user with that email or username`);
        const { userId, username, factorsRemoved, sessionsEnded } = outcome;
        console.log(JSON.stringify({ user_id: userId, username, factors_removed: factorsRemoved, sessions_ended: sessionsEnded }));
      });
    },
  };
}
