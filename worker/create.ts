/** Builds the Temporal worker for the `audits` task queue with its workflows and activities. */
import {
  NativeConnection,
  Worker,
  Runtime,
  makeTelemetryFilterString,
  DefaultLogger,
} from '@temporalio/worker';
import type { Knex } from 'knex';
import type { Config } from '../platform/config';
import type { Logger } from '../platform/logger';
import { createActivities } from '../activities';
import { BlobStore } from '../platform/blob-store';
import { BUILTIN_AGENTS } from '../activities/audits/agents/builtin';
import type { Agent } from '../activities/audits/agents/types';
import { providerFromConfig, type ModelProvider } from '../activities/audits/agents/model';
import type { ModelPrice } from '../domain/audits/pricing';
import { TRACING_INTERCEPTORS, WORKFLOWS_PATH } from './bundle';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import { NoopSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Resource } from '@opentelemetry/resources';
import { activeTracing } from '../platform/tracing';
import { watchPool } from '../platform/metrics';

let runtimeInstalled = false;

/**
 * Routes the SDK's own logs through our pino logger and, when TEMPORAL_METRICS_PORT is set,
 * serves the SDK's metrics (pollers, task slots, schedule-to-start latencies) for Prometheus
 * (once per process: the first worker's settings hold).
 */
function installRuntime(
  log: Logger,
  handleSignals: boolean,
  metrics: { host: string; port: number | null },
): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({
    logger: new DefaultLogger('WARN', (entry) => {
      const fn = entry.level === 'ERROR' ? log.error.bind(log) : log.warn.bind(log);
      fn({ temporal: entry.meta }, entry.message);
    }),
    // A process that orders its own shutdown (npm start) handles signals itself.
    ...(handleSignals ? {} : { shutdownSignals: [] }),
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} },
      ...(metrics.port
        ? {
            metrics: {
              prometheus: {
                bindAddress: `${metrics.host}:${metrics.port}`,
                countersTotalSuffix: true,
                useSecondsForDurations: true,
              },
            },
          }
        : {}),
    },
  });
}

export async function createWorker(deps: {
  config: Config;
  db: Knex;
  log: Logger;
  address: string;
  handleSignals?: boolean;
  /** Agents beyond the built-in ones (tests register their own). */
  extraAgents?: readonly Agent[];
  /** Defaults to the provider of `config.model`. */
  model?: ModelProvider | null;
  prices?: Record<string, ModelPrice>;
}): Promise<{
  worker: Worker;
  connection: NativeConnection;
}> {
  installRuntime(deps.log, deps.handleSignals ?? true, {
    host: deps.config.metricsHost,
    port: deps.config.temporalMetricsPort,
  });
  watchPool('worker', deps.db);
  const tracing = activeTracing();
  // Workflow spans reach the exporter through a sink. A pre-built bundle always holds the
  // workflow interceptors, so its worker always registers the sink (spans dropped when off).
  const bundled = Boolean(deps.config.workflowBundlePath);
  const sinks =
    tracing || bundled
      ? {
          exporter: makeWorkflowExporter(
            tracing?.spanProcessor ?? new NoopSpanProcessor(),
            tracing?.resource ?? Resource.empty(),
          ),
        }
      : undefined;
  const connection = await NativeConnection.connect({ address: deps.address });
  const worker = await Worker.create({
    connection,
    namespace: deps.config.temporalNamespace,
    taskQueue: deps.config.taskQueue,
    // Drain on shutdown (SIGTERM): no new tasks, running activities finish within the grace
    // (heartbeating); those still running are then cancelled with WORKER_SHUTDOWN and fail at
    // once as retryable (activities/audits), so the next attempt starts elsewhere immediately.
    // The force time leaves them a few seconds to report that before the process gives up.
    shutdownGraceTime: deps.config.shutdownGraceSeconds * 1000,
    shutdownForceTime: (deps.config.shutdownGraceSeconds + 10) * 1000,
    ...(deps.config.workflowBundlePath
      ? { workflowBundle: { codePath: deps.config.workflowBundlePath } }
      : { workflowsPath: WORKFLOWS_PATH }),
    sinks,
    interceptors: tracing
      ? {
          ...(bundled ? {} : { workflowModules: [TRACING_INTERCEPTORS] }),
          activity: [
            (ctx) => ({
              inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
              outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
            }),
          ],
        }
      : undefined,
    activities: createActivities({
      db: deps.db,
      log: deps.log,
      config: deps.config,
      blobs: new BlobStore(deps.config.blobDir),
      agents: [...BUILTIN_AGENTS, ...(deps.extraAgents ?? [])],
      model: deps.model !== undefined ? deps.model : providerFromConfig(deps.config.model),
      prices: deps.prices ?? deps.config.modelPrices,
    }),
  });
  return { worker, connection };
}
