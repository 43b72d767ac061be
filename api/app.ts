/** The Koa application: global middleware, then the routes derived from the registry. */
import Koa from 'koa';
import type { AppServices } from './services';
import { frontDoor } from './middleware';
import { buildRoutes } from './registry/router';
import { OPERATIONS } from './operations';
import type { AnyOperation } from './registry/operation';

export function createApp(
  services: AppServices,
  operations: readonly AnyOperation[] = OPERATIONS,
): Koa {
  const app = new Koa({ proxy: services.config.trustProxy });
  // Errors are rendered by frontDoor; keep Koa from printing them a second time.
  app.silent = true;
  const routes = buildRoutes(operations, services);
  app.use(frontDoor(services));
  app.use(routes.middleware);
  return app;
}
