/**
 * Boots the real API (Koa over HTTP on a free port) against a test database and the test
 * Temporal server. Logs are captured in memory so tests can inspect them.
 */
import { Writable } from 'node:stream';
import { loadConfig, type Config } from '../../platform/config';
import { createLogger } from '../../platform/logger';
import { TemporalGateway } from '../../platform/temporal';
import { createServices, type AppServices } from '../../api/services';
import { startApi } from '../../api/server';
import { createTestDatabase, type TestDatabase } from './db';
import { createDb } from '../../db/connection';

export interface TestApp {
  url: string;
  services: AppServices;
  database: TestDatabase;
  /** Every log line written so far, as text. */
  logs(): string;
  close(): Promise<void>;
}

/**
 * `options.route` rewrites the database URL the API connects with (a test sends it through a
 * proxy it can cut); the test database itself is made and dropped directly.
 */
export async function startTestApp(
  overrides: Partial<Config> = {},
  options: { route?: (url: string) => string } = {},
): Promise<TestApp> {
  const database = await createTestDatabase();
  const db = options.route ? createDb(options.route(database.url)) : database.db;
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const config: Config = {
    ...loadConfig({}),
    databaseUrl: database.url,
    temporalAddress: process.env.TEMPORAL_ADDRESS,
    logLevel: 'debug',
    validateResponses: true,
    authCacheTtlMs: 0,
    ...overrides,
  };
  const log = createLogger(config.logLevel, sink);
  const temporal = new TemporalGateway(
    config.temporalAddress ?? '127.0.0.1:1',
    config.temporalNamespace,
  );
  const services = createServices({ config, db, log, temporal });
  const api = await startApi(services, 0, '127.0.0.1');
  return {
    url: api.url,
    services,
    database,
    logs: () => lines.join(''),
    async close() {
      await api.close();
      await temporal.close();
      if (db !== database.db) await db.destroy();
      await database.drop();
    },
  };
}
