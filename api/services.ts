/** What request handlers may use; built once per process by createServices. */
import type { Knex } from 'knex';
import type { Config } from '../platform/config';
import type { Logger } from '../platform/logger';
import type { TemporalGateway } from '../platform/temporal';
import { TokenAuthenticator } from './auth';
import { DemoReadAccess } from './demo-read';
import { RateLimiter } from './rate-limit';
import { OAuthGateway } from './oauth/gateway';

export interface AppServices {
  config: Config;
  db: Knex;
  log: Logger;
  temporal: TemporalGateway;
  auth: TokenAuthenticator;
  rateLimiter: RateLimiter;
  /** Tokenless reads of the demo workspace, when DEMO_PUBLIC_READ is on. */
  demoRead: DemoReadAccess | null;
  /** The MCP gateway's authorization server and the customer session. */
  oauth: OAuthGateway;
}

export function createServices(deps: {
  config: Config;
  db: Knex;
  log: Logger;
  temporal: TemporalGateway;
}): AppServices {
  return {
    ...deps,
    auth: new TokenAuthenticator(deps.db, deps.config.authCacheTtlMs, deps.log),
    rateLimiter: new RateLimiter(deps.config.rateLimitQuota, deps.config.rateLimitWindowSeconds),
    demoRead: deps.config.demoPublicRead ? new DemoReadAccess(deps.db, deps.config) : null,
    oauth: new OAuthGateway(deps.db, deps.config, deps.log),
  };
}
