/** `npm run api`: the API process alone, against configured Postgres and Temporal. */
import { loadConfig } from '../platform/config';
import { createLogger } from '../platform/logger';
import { createDb } from '../db/connection';
import { migrateLatest } from '../db/migrate';
import { TemporalGateway } from '../platform/temporal';
import { createServices } from './services';
import { startApi } from './server';
import { onShutdown } from '../platform/shutdown';

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  if (!config.databaseUrl)
    throw new Error('DATABASE_URL is required (npm start provides one in development).');
  if (!config.temporalAddress)
    throw new Error('TEMPORAL_ADDRESS is required (npm start provides one in development).');
  const db = createDb(config.databaseUrl, { max: config.dbPoolMax });
  if (config.migrateOnStart) await migrateLatest(db);
  const temporal = new TemporalGateway(config.temporalAddress, config.temporalNamespace);
  const api = await startApi(
    createServices({ config, db, log, temporal }),
    config.port,
    config.host,
  );
  log.info({ url: api.url }, 'api listening');
  onShutdown(log, async () => {
    await api.close();
    await temporal.close();
    await db.destroy();
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
