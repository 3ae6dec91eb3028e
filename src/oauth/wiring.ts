import type { Kysely } from 'kysely';
import type { MfaRequirement } from '../account/mfa/requirement.js';
import type { UserStore } from '../account/user-store.js';
import type { ChangeFeed } from '../changes/feed.js';
import { type Clock, iso } from '../clock.js';
import type { Config } from '../config.js';
import type { Tables } from '../db/tables.js';
import type { Sweep } from '../maintenance/runner.js';
import type { Metrics } from '../observability/metrics/wire.js';
import { seriesOf } from '../observability/metrics/series.js';
import type { ScopeCatalogue } from '../scopes/catalogue.js';
import type { TokenStore } from '../tokens/store.js';
import { type ApprovalDeps, DeviceApproval } from './approval.js';
import { OAuthClients } from './clients.js';
import { DeviceFlow } from './device-service.js';
import { DeviceRequestStore } from './device-store.js';
import { deviceCounts } from '../observability/metrics/device.js';
import { SelfRevocation } from './revocation.js';

/** CLI login by device authorization (docs/device-flow.md): what the routes, the CLI and the sweeps use. */
export interface DeviceParts {
  readonly config: Config['device'];
  /** `rz-cli` and the operator's registered clients (`rz-auth clients ...`). */
  readonly clients: OAuthClients;
  readonly requests: DeviceRequestStore;
  /** `POST /oauth/device_authorization` and the device grant of `POST /oauth/token`. */
  readonly flow: DeviceFlow;
  /** `POST /api/device/lookup|approve|deny`. */
  readonly approval: DeviceApproval;
  /** `POST /oauth/revoke`. */
  readonly revocation: SelfRevocation;
  /** Deletes requests an hour past their expiry, so abandoned ones leave nothing behind. */
  readonly sweep: Sweep;
}

/** How long an expired request is kept: its poll keeps answering `expired_token` meanwhile. */
export const EXPIRED_KEPT_MS = 60 * 60 * 1000;

export interface DeviceWiring {
  readonly db: Kysely<Tables>;
  readonly config: Config;
  readonly clock: Clock;
  readonly scopes: ScopeCatalogue;
  readonly users: UserStore;
  readonly requirement: MfaRequirement;
  readonly tokens: TokenStore;
  readonly feed: ChangeFeed;
  readonly metrics: Metrics | null;
  readonly notice: ApprovalDeps['notice'];
}

export function createDeviceParts({ db, config, clock, scopes, users, requirement, tokens, feed, metrics, notice }: DeviceWiring): DeviceParts {
  const counts = metrics ? deviceCounts(metrics) : null;
  const tokenCounts = metrics ? seriesOf(metrics).tokens : null;
  const clients = new OAuthClients(db, scopes, clock);
  const requests = new DeviceRequestStore(db);
  const device = config.device;
  return {
    config: device,
    clients,
    requests,
    flow: new DeviceFlow({ config: device, clients, store: requests, users, requirement, policy: config.tokens, caps: config.caps, clock, tokenCounts, counts }),
    approval: new DeviceApproval({ config: device, clients, store: requests, catalogue: scopes, policy: config.tokens, clock, counts, notice }),
    revocation: new SelfRevocation(tokens, feed, clock, tokenCounts),
    sweep: { name: 'device requests', run: (now) => requests.prune(iso(now - EXPIRED_KEPT_MS)) },
  };
}
