/** The Koa application: the MCP gateway's routes, global middleware, then the registry's routes. */
import Koa from 'koa';
import compose from 'koa-compose';
import type { AppServices } from './services';
import { frontDoor } from './middleware';
import { buildRoutes } from './registry/router';
import { OPERATIONS } from './operations';
import type { AnyOperation } from './registry/operation';
import { gatewayMiddleware } from './gateway';
import { McpGateway } from './mcp/server';
import { inProcessDispatcher } from './mcp/dispatch';
import { consoleMiddleware } from './console/static';

export function createApp(
  services: AppServices,
  operations: readonly AnyOperation[] = OPERATIONS,
  options: { mcpPollMs?: number } = {},
): Koa {
  const app = new Koa({ proxy: services.config.trustProxy });
  // Errors are rendered by frontDoor; keep Koa from printing them a second time.
  app.silent = true;
  const routes = buildRoutes(operations, services);
  // The REST API; MCP tool calls run through it too, in process, with their principal.
  const api = compose([frontDoor(services), routes.middleware]) as Koa.Middleware;
  const mcp = new McpGateway(
    services,
    inProcessDispatcher(app, api),
    operations,
    options.mcpPollMs,
  );
  app.use(consoleMiddleware(services));
  app.use(gatewayMiddleware(services, mcp));
  app.use(api);
  return app;
}
