/** The Koa application: global middleware, then the routes derived from the registry. */
import Koa from 'koa';
import type { AppServices } from './services';
import { problemsAndAccessLog, rateLimit, requestId, resolveCredentials } from './middleware';
import { buildRouter } from './registry/router';
import { OPERATIONS } from './operations';
import type { AnyOperation } from './registry/operation';

export function createApp(
  services: AppServices,
  operations: readonly AnyOperation[] = OPERATIONS,
): Koa {
  const app = new Koa({ proxy: process.env.TRUST_PROXY === 'true' });
  // Errors are rendered by problemsAndAccessLog; keep Koa from printing them a second time.
  app.silent = true;
  const router = buildRouter(operations, services);
  app.use(requestId(services));
  app.use(problemsAndAccessLog(services));
  app.use(resolveCredentials(services));
  app.use(rateLimit(services));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
