/**
 * An API plus a Temporal worker on a task queue of their own, sharing a blob folder: what an
 * audit test needs. The worker runs the real workflows and activities against the test
 * Temporal server; tests may register extra agents.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Worker } from '@temporalio/worker';
import type { Config } from '../../platform/config';
import { closeAnalysisPool } from '../../analysis/pool';
import { createWorker } from '../../worker/create';
import type { Agent } from '../../activities/audits/agents/types';
import type { ModelProvider } from '../../activities/audits/agents/model';
import type { ModelPrice } from '../../domain/audits/pricing';
import { startTestApp, type TestApp } from './app';
import { call, type Reply } from './http';
import { LOCAL_TEST_WORKSPACES } from './factories';

export interface AuditHarness {
  app: TestApp;
  /** Null when started with `worker: false` (the test runs its own worker processes). */
  worker: Worker | null;
  dir: string;
  stopWorker(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Harnesses open in this process. When the last one closes, the analysis pool's threads are ended
 * as the worker process ends them at shutdown (worker/main.ts): a thread (or its message port) left
 * behind by a cancelled analysis would otherwise keep the test process from exiting.
 */
let openHarnesses = 0;
/**
 * Set when a Temporal worker's shutdown failed in this process. The SDK's reusable workflow VM can
 * throw on shutdown ("Workflow execution context should have been disposed first", when the
 * shutdown races an activation); its workflow thread then stays alive and the test process would
 * never exit, though every test has passed (ava waits for the process). When the last harness has
 * closed, such a process ends itself after SHUTDOWN_FAILED_EXIT_MS; results are already reported.
 */
let shutdownFailed = false;
const SHUTDOWN_FAILED_EXIT_MS = 30_000;
async function harnessClosed(): Promise<void> {
  openHarnesses -= 1;
  if (openHarnesses > 0) return;
  await closeAnalysisPool();
  if (shutdownFailed) {
    console.error('a Temporal worker shutdown failed: this test process ends in 30 s');
    setTimeout(() => process.exit(process.exitCode ?? 0), SHUTDOWN_FAILED_EXIT_MS).unref();
  }
}

export async function startAuditHarness(
  options: {
    extraAgents?: Agent[];
    model?: ModelProvider | null;
    prices?: Record<string, ModelPrice>;
    config?: Partial<Config>;
    /** false: no in-process worker (the test runs its own worker processes). */
    worker?: boolean;
    /** Rewrites the database URL the API and the worker use (see startTestApp). */
    route?: (url: string) => string;
  } = {},
): Promise<AuditHarness> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'archaudit-harness-'));
  const app = await startTestApp(
    {
      taskQueue: `audits-test-${crypto.randomBytes(4).toString('hex')}`,
      blobDir: path.join(dir, 'blobs'),
      workDir: path.join(dir, 'work'),
      // The tests' workspaces (createTenant's `ws-` slugs) register repositories made on disk.
      localRepositoryWorkspaces: [LOCAL_TEST_WORKSPACES],
      agentHeartbeatTimeoutSeconds: 5,
      rateLimitQuota: 1_000_000,
      // A test's teardown cancels what still runs at once (the drain has its own fault test).
      shutdownGraceSeconds: 0,
      ...options.config,
    },
    { route: options.route },
  );
  openHarnesses += 1;
  let counted = true;
  const released = async () => {
    if (!counted) return;
    counted = false;
    await harnessClosed();
  };
  if (options.worker === false) {
    return {
      app,
      worker: null,
      dir,
      stopWorker: async () => {},
      async close() {
        await app.close();
        fs.rmSync(dir, { recursive: true, force: true });
        await released();
      },
    };
  }
  const { worker, connection } = await createWorker({
    config: app.services.config,
    db: app.services.db,
    log: app.services.log,
    address: process.env.TEMPORAL_ADDRESS!,
    handleSignals: false,
    extraAgents: options.extraAgents,
    model: options.model ?? null,
    prices: options.prices ?? {},
  });
  const running = worker.run();
  let stopped = false;
  const stopWorker = async () => {
    if (stopped) return;
    stopped = true;
    try {
      worker.shutdown();
      // A forced end (an activity that ignored its cancellation) must not leave the connection
      // open: the test process could then never exit.
      await running.catch((err: unknown) => {
        shutdownFailed = true;
        console.error('worker shutdown:', err);
      });
    } finally {
      await connection.close();
    }
  };
  return {
    app,
    worker,
    dir,
    stopWorker,
    async close() {
      try {
        await stopWorker();
      } finally {
        await app.close();
        fs.rmSync(dir, { recursive: true, force: true });
        await released();
      }
    },
  };
}

/** Polls getAudit until the audit leaves queued/running (or the timeout passes). */
export async function waitForAudit(
  base: string,
  token: string,
  workspaceId: string,
  auditId: string,
  timeoutMs = 60_000,
): Promise<Reply> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reply = await call(base, 'GET', `/v1/workspaces/${workspaceId}/audits/${auditId}`, {
      token,
    });
    if (reply.status !== 200) return reply;
    if (!['queued', 'running'].includes(reply.body.status)) return reply;
    if (Date.now() > deadline)
      throw new Error(`audit ${auditId} still ${reply.body.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Starts an audit of `body` (createAudit) and waits until it ends: its id and final status. */
export async function runAudit(
  base: string,
  token: string,
  workspaceId: string,
  body: Record<string, unknown>,
  timeoutMs = 120_000,
): Promise<{ id: string; status: string }> {
  const started = await call(base, 'POST', `/v1/workspaces/${workspaceId}/audits`, {
    token,
    body,
  });
  if (started.status !== 202) throw new Error(started.text);
  const done = await waitForAudit(base, token, workspaceId, started.body.id, timeoutMs);
  return { id: started.body.id, status: done.body.status };
}
