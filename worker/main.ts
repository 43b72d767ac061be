/** `npm run worker`: one Temporal worker process against configured Postgres and Temporal. */
import { loadConfig } from '../platform/config';
import { createLogger } from '../platform/logger';
import { createDb } from '../db/connection';
import { createWorker } from './create';
import { Client, Connection } from '@temporalio/client';
import { ensureSweepSchedules } from '../platform/retention-schedule';
import { ensureSearchAttributes } from '../platform/temporal';
import { closeAnalysisPool } from '../analysis/pool';
import { serveMetrics } from '../platform/metrics';
import { startTracing } from '../platform/tracing';

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  if (!config.databaseUrl) throw new Error('DATABASE_URL is required.');
  if (!config.temporalAddress) throw new Error('TEMPORAL_ADDRESS is required.');
  const tracing = startTracing(config.otlpEndpoint, 'archaudit-worker');
  const db = createDb(config.databaseUrl, { max: config.dbPoolMax });
  // Register the custom search attributes (idempotent); a cluster that forbids it keeps working.
  try {
    const admin = await Connection.connect({ address: config.temporalAddress });
    await ensureSearchAttributes(admin, config.temporalNamespace);
    await admin.close();
  } catch (err) {
    log.warn({ err }, 'could not register search attributes; register them with the temporal CLI');
  }
  // The sweeps (retention, audit recovery) run on Temporal Schedules; creating them is idempotent.
  // A failure leaves audits running but attachments kept past their retention and audits whose
  // start was lost queued: say so loudly.
  try {
    const scheduler = await Connection.connect({ address: config.temporalAddress });
    try {
      await ensureSweepSchedules(
        new Client({ connection: scheduler, namespace: config.temporalNamespace }),
        config,
      );
    } finally {
      await scheduler.close();
    }
  } catch (err) {
    log.error(
      { err },
      'could not create the sweep schedules; expired attachments are not removed and unstarted audits not recovered until a worker creates them',
    );
  }
  const { worker, connection } = await createWorker({
    config,
    db,
    log,
    address: config.temporalAddress,
  });
  const closeMetrics = await serveMetrics(config.workerMetricsPort, config.metricsHost, log);
  log.info({ taskQueue: config.taskQueue }, 'worker running');
  // Worker.run() handles SIGINT/SIGTERM itself: it stops polling and drains running tasks.
  await worker.run();
  await connection.close();
  await closeMetrics();
  await tracing?.shutdown();
  await closeAnalysisPool();
  await db.destroy();
  log.info('worker stopped');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
