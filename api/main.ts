/** `npm run api`: the API process alone, against configured Postgres and Temporal. */
import { loadConfig } from '../platform/config';
import { createLogger } from '../platform/logger';
import { createDb } from '../db/connection';
import { migrateLatest } from '../db/migrate';
import { TemporalGateway } from '../platform/temporal';
import { createServices } from './services';
import { startApi } from './server';
import { onShutdown } from '../platform/shutdown';
import { serveMetrics } from '../platform/metrics';
import { startTracing } from '../platform/tracing';

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  if (!config.databaseUrl)
    throw new Error('DATABASE_URL is required (npm start provides one in development).');
  if (!config.temporalAddress)
    throw new Error('TEMPORAL_ADDRESS is required (npm start provides one in development).');
  // Before anything that makes spans (the request middleware, the Temporal client).
  const tracing = startTracing(config.otlpEndpoint, 'archaudit-api');
  const db = createDb(config.databaseUrl, { max: config.dbPoolMax });
  if (config.migrateOnStart) await migrateLatest(db);
  const temporal = new TemporalGateway(config.temporalAddress, config.temporalNamespace);
  const api = await startApi(
    createServices({ config, db, log, temporal }),
    config.port,
    config.host,
  );
  const closeMetrics = await serveMetrics(config.metricsPort, config.metricsHost, log);
  log.info({ url: api.url }, 'api listening');
  onShutdown(log, async () => {
    await api.close();
    await closeMetrics();
    await tracing?.shutdown();
    await temporal.close();
    await db.destroy();
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
