/**
 * Runs the API on a port with graceful shutdown: stop accepting, let in-flight requests finish
 * (up to shutdownTimeoutMs), then close lingering connections. Expects a migrated database.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app';
import type { AppServices } from './services';
import { ensureCatalog } from '../db/controls';

export interface RunningApi {
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startApi(
  services: AppServices,
  port: number,
  host: string,
): Promise<RunningApi> {
  // Reference data the API serves: the built-in control catalog of this version (idempotent), so
  // that reads never write.
  await ensureCatalog(services.db);
  const app = createApp(services);
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shownHost}:${address.port}`,
    port: address.port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(
          () => server.closeAllConnections(),
          services.config.shutdownTimeoutMs,
        );
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}
