/**
 * Prometheus metrics (prom-client): one registry per process, served on its own port
 * (METRICS_PORT for the API, WORKER_METRICS_PORT for the worker) at `/metrics`, away from the
 * public API. The API counts requests and their latency by operation id and status and reports
 * audits by status (one grouped count at scrape time); the worker times stages and counts agent
 * attempts, their cost and tokens, and the lag of schedule dispatches; both report their
 * database pool and Node's process metrics (memory, file descriptors, event loop, GC).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Knex } from 'knex';
import client from 'prom-client';

const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry, prefix: 'archaudit_' });

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const STAGE_SECONDS = [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800];

/** The API's requests by operation id (`unmatched` for no route), method and status. */
export const httpRequests = new client.Counter({
  name: 'archaudit_http_requests_total',
  help: 'API requests by operation id, method and status code',
  labelNames: ['operation', 'method', 'status'] as const,
  registers: [registry],
});

export const httpDuration = new client.Histogram({
  name: 'archaudit_http_request_duration_seconds',
  help: 'API request latency by operation id and status code',
  labelNames: ['operation', 'status'] as const,
  buckets: SECONDS,
  registers: [registry],
});

/** Ended stages: wall time from running to its end, by stage key and final status. */
export const stageDuration = new client.Histogram({
  name: 'archaudit_stage_duration_seconds',
  help: 'Audit stage durations by stage and final status',
  labelNames: ['stage', 'status'] as const,
  buckets: STAGE_SECONDS,
  registers: [registry],
});

export const agentAttempts = new client.Counter({
  name: 'archaudit_agent_attempts_total',
  help: 'Agent attempts by agent and outcome (succeeded, cached, failed, cancelled)',
  labelNames: ['agent', 'outcome'] as const,
  registers: [registry],
});

export const agentCost = new client.Counter({
  name: 'archaudit_agent_cost_usd_total',
  help: 'Model cost of agent attempts in USD, by agent and model',
  labelNames: ['agent', 'model'] as const,
  registers: [registry],
});

export const agentTokens = new client.Counter({
  name: 'archaudit_agent_tokens_total',
  help: 'Model tokens of agent attempts, by agent and kind (input, cached_input, output)',
  labelNames: ['agent', 'kind'] as const,
  registers: [registry],
});

/** How late a schedule's occurrence was dispatched (its audit created) after it was due. */
export const scheduleDispatchLag = new client.Histogram({
  name: 'archaudit_schedule_dispatch_lag_seconds',
  help: 'Delay between a schedule occurrence and the creation of its audit',
  buckets: [0.5, 1, 5, 15, 30, 60, 120, 300, 600],
  registers: [registry],
});

/** Audits waiting in line for a running slot (MAX_RUNNING_AUDITS*), as of the last ask. */
export const auditsWaiting = new client.Gauge({
  name: 'archaudit_audits_waiting_admission',
  help: 'Audits queued in line for a running slot (admission limits)',
  registers: [registry],
});

export const retentionRemoved = new client.Counter({
  name: 'archaudit_retention_removed_total',
  help: 'Rows removed by the retention sweep, by kind',
  labelNames: ['kind'] as const,
  registers: [registry],
});

/** tarn's pool (Knex's) as far as its public methods show it. */
interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  numPendingCreates(): number;
  max: number;
}

const pools = new Map<string, Knex>();

const poolGauge = (name: string, help: string, read: (p: TarnPool) => number) =>
  new client.Gauge({
    name,
    help,
    labelNames: ['pool'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [label, db] of pools) {
        const pool = (db.client as { pool?: TarnPool }).pool;
        if (pool) this.set({ pool: label }, read(pool));
      }
    },
  });

poolGauge('archaudit_db_pool_connections_used', 'Database connections in use', (p) => p.numUsed());
poolGauge('archaudit_db_pool_connections_free', 'Idle database connections', (p) => p.numFree());
poolGauge(
  'archaudit_db_pool_waiters',
  'Queries waiting for a database connection',
  (p) => p.numPendingAcquires() + p.numPendingCreates(),
);
poolGauge('archaudit_db_pool_max', 'Database pool size (DB_POOL_MAX)', (p) => p.max);

/** Reports `db`'s pool under `label` (api, worker). */
export function watchPool(label: string, db: Knex): void {
  pools.set(label, db);
}

let auditCounts: (() => Promise<Array<{ status: string; count: number }>>) | undefined;

new client.Gauge({
  name: 'archaudit_audits',
  help: 'Audits by status (counted at scrape time)',
  labelNames: ['status'] as const,
  registers: [registry],
  async collect() {
    if (!auditCounts) return;
    // A database outage leaves the last values rather than failing the whole scrape.
    const rows = await auditCounts().catch(() => null);
    if (!rows) return;
    this.reset();
    for (const { status, count } of rows) this.set({ status }, count);
  },
});

/** Makes `archaudit_audits` count with `query` (the API's). */
export function countAuditsWith(query: () => Promise<Array<{ status: string; count: number }>>) {
  auditCounts = query;
}

/** The registry's text exposition. */
export async function metricsText(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/** Serves `GET /metrics` on `port` (0: any free one) at `host`. */
export async function startMetricsServer(port: number, host: string): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    metricsText().then(
      ({ contentType, body }) => res.writeHead(200, { 'Content-Type': contentType }).end(body),
      (err: unknown) =>
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`${String(err)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * The metrics server of a process when `port` is set (METRICS_PORT, WORKER_METRICS_PORT); its
 * close function, or one that does nothing.
 */
export async function serveMetrics(
  port: number | null,
  host: string,
  log: { info(obj: object, msg: string): void },
): Promise<() => Promise<void>> {
  if (!port) return async () => {};
  const server = await startMetricsServer(port, host);
  log.info({ url: `http://${host}:${server.port}/metrics` }, 'metrics listening');
  return server.close;
}
