/**
 * `npm run bench:soak`: audits at a steady rate for DURATION (default 10 minutes) against one API
 * (this process) and one worker (`npm run worker` in a process of its own), with retention on,
 * sampling memory, file descriptors, database connections and size as it goes.
 *
 * - PostgreSQL: BENCH_DATABASE_URL, else an embedded one; Temporal: TEMPORAL_ADDRESS, else a
 *   headless in-memory dev server (as bench:audits).
 * - One audit every SOAK_INTERVAL_MS (5000), each of a new commit of a small repository (one file
 *   changed), so agents do real work instead of answering from their cache.
 * - Retention: the worker's `retention-sweep` schedule runs every minute with
 *   RETENTION_AUDIT_DAYS=1 and RETENTION_KEEP_SNAPSHOTS=SOAK_KEEP (5). A soak lasts minutes, not
 *   days: every sample, audits finished more than a minute ago are aged by two days (completed_at
 *   moved back) so the sweep treats them as old. SOAK_RETENTION=off leaves them young (nothing is
 *   pruned): the growth per audit without retention.
 * - Every SOAK_SAMPLE_SECONDS (30): RSS and open fds of the API and the worker, the database
 *   size, connections, audits finished and pruned. At the end: the samples, the growth per
 *   audit, the largest tables, and the load.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { Connection } from '@temporalio/client';
import { createServices } from '../api/services';
import { startApi } from '../api/server';
import { createDb } from '../db/connection';
import { migrateLatest } from '../db/migrate';
import { createWorkspaceWithOwner } from '../platform/bootstrap';
import { loadConfig, type Config } from '../platform/config';
import { createLogger } from '../platform/logger';
import { MissingToolError, startLocalServices } from '../platform/dev-services';
import { ensureSearchAttributes, TemporalGateway } from '../platform/temporal';
import { createRepo, SAMPLE_FILES } from '../test/helpers/git';
import { intEnv } from './env';
import { rssMb, startWorkerProcess } from './worker-process';

const ROOT = path.resolve(__dirname, '..');

/** DURATION: seconds, or with a unit (`90s`, `3m`, `1h`). */
function durationMs(): number {
  const raw = process.env.DURATION ?? '10m';
  const m = /^(\d+)(s|m|h)?$/.exec(raw);
  if (!m) throw new Error(`DURATION must be like 600, 90s, 3m or 1h, got ${raw}`);
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 's' | 'm' | 'h'];
}

const DURATION_MS = durationMs();
const INTERVAL_MS = intEnv('SOAK_INTERVAL_MS', 5000);
const SAMPLE_MS = intEnv('SOAK_SAMPLE_SECONDS', 30) * 1000;
const KEEP = intEnv('SOAK_KEEP', 5);
const RETENTION = process.env.SOAK_RETENTION !== 'off';

function fds(pid: number): number {
  return fs.readdirSync(`/proc/${pid}/fd`).length;
}

interface Sample {
  seconds: number;
  apiRssMb: number;
  workerRssMb: number;
  apiFds: number;
  workerFds: number;
  dbMb: number;
  connections: number;
  completed: number;
  failed: number;
  pruned: number;
}

async function main(): Promise<void> {
  const cleanups: Array<() => Promise<void>> = [];
  const cleanup = async () => {
    for (const fn of cleanups.reverse()) await fn().catch((e: unknown) => console.error(e));
    cleanups.length = 0;
  };
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
  try {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'archaudit-soak-'));
    cleanups.push(async () => fs.rmSync(tmp, { recursive: true, force: true }));
    const services = await startLocalServices({
      tmpDir: tmp,
      database: 'archaudit',
      databaseUrl: process.env.BENCH_DATABASE_URL,
      temporalAddress: process.env.TEMPORAL_ADDRESS,
      toolsDir: path.join(ROOT, '.tools'),
      say: (l) => console.log(l),
    });
    cleanups.push(() => services.stop());
    const { databaseUrl, temporalAddress } = services;
    const admin = await Connection.connect({ address: temporalAddress });
    await ensureSearchAttributes(admin, 'default');
    await admin.close();

    const db: Knex = createDb(databaseUrl, { max: 10 });
    cleanups.push(() => db.destroy());
    await migrateLatest(db);
    const slug = `soak-${crypto.randomBytes(4).toString('hex')}`;
    const { workspace, token } = await createWorkspaceWithOwner(db, {
      name: 'Soak',
      slug,
      login: 'soak',
      days: 1,
    });
    const config: Config = {
      ...loadConfig({}),
      databaseUrl,
      temporalAddress,
      taskQueue: `soak-${crypto.randomBytes(4).toString('hex')}`,
      logLevel: 'warn',
      rateLimitQuota: 1_000_000_000,
      localRepositoryWorkspaces: [slug],
      blobDir: path.join(tmp, 'blobs'),
      workDir: path.join(tmp, 'work'),
    };
    const log = createLogger(config.logLevel);
    const gateway = new TemporalGateway(temporalAddress, 'default');
    cleanups.push(() => gateway.close());
    const api = await startApi(
      createServices({ config, db, log, temporal: gateway }),
      0,
      '127.0.0.1',
    );
    cleanups.push(() => api.close());

    // The worker as production runs it, with the retention schedule every minute.
    const { child: worker, stop } = await startWorkerProcess({
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_TASK_QUEUE: config.taskQueue,
      BLOB_DIR: config.blobDir,
      WORK_DIR: config.workDir,
      LOCAL_REPOSITORY_WORKSPACES: slug,
      MODEL_BASE_URL: '',
      RETENTION_SWEEP_INTERVAL_MINUTES: '1',
      RETENTION_AUDIT_DAYS: '1',
      RETENTION_KEEP_SNAPSHOTS: String(KEEP),
    });
    cleanups.push(stop);

    const repo = createRepo(SAMPLE_FILES);
    cleanups.push(async () => repo.remove());
    const base = `${api.url}/v1/workspaces/${workspace.id}`;
    const headers = { Authorization: `Bearer ${token.token}`, 'Content-Type': 'application/json' };
    const created = await fetch(`${base}/repositories`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'soak-shop', url: `file://${repo.dir}` }),
    });
    const repositoryId = ((await created.json()) as { id: string }).id;

    console.log(
      `soak: ${DURATION_MS / 1000} s, one audit every ${INTERVAL_MS} ms, retention ${RETENTION ? `on (keep ${KEEP} snapshots, audits aged after 1 min)` : 'off'}`,
    );
    const started = Date.now();
    let errors = 0;
    let sent = 0;
    const count = async (where: Record<string, unknown>) =>
      Number((await db('audits').where(where).count('* as n'))[0]!.n);
    const sample = async (): Promise<Sample> => {
      if (RETENTION) {
        await db('audits')
          .where({ workspace_id: workspace.id })
          .whereNotNull('completed_at')
          .andWhere('completed_at', '<', db.raw("now() - interval '1 minute'"))
          .andWhere('completed_at', '>', db.raw("now() - interval '1 day'"))
          .update({ completed_at: db.raw("completed_at - interval '2 days'") });
      }
      const size = await db.raw<{ rows: Array<{ bytes: number; connections: number }> }>(
        `SELECT pg_database_size(current_database()) AS bytes,
                (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()) AS connections`,
      );
      return {
        seconds: Math.round((Date.now() - started) / 1000),
        apiRssMb: rssMb(process.pid),
        workerRssMb: rssMb(worker.pid!),
        apiFds: fds(process.pid),
        workerFds: fds(worker.pid!),
        dbMb: Math.round((size.rows[0]!.bytes / 1024 / 1024) * 10) / 10,
        connections: Number(size.rows[0]!.connections),
        completed: await count({ workspace_id: workspace.id, status: 'completed' }),
        failed: await count({ workspace_id: workspace.id, status: 'failed' }),
        pruned: Number(
          (
            await db('audits')
              .where({ workspace_id: workspace.id })
              .whereNotNull('retention_pruned_at')
              .count('* as n')
          )[0]!.n,
        ),
      };
    };
    const samples: Sample[] = [await sample()];
    console.log(samples[0]);
    let nextSample = started + SAMPLE_MS;
    while (Date.now() - started < DURATION_MS) {
      const tick = Date.now();
      repo.commit({ 'services/api/soak.txt': `${sent} ${crypto.randomUUID()}\n` }, `soak ${sent}`);
      const res = await fetch(`${base}/audits`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ repository_id: repositoryId }),
      }).catch(() => null);
      if (!res || res.status !== 202) errors++;
      await res?.arrayBuffer();
      sent++;
      if (Date.now() >= nextSample) {
        samples.push(await sample());
        console.log(samples[samples.length - 1]);
        nextSample += SAMPLE_MS;
      }
      await new Promise((r) => setTimeout(r, Math.max(0, INTERVAL_MS - (Date.now() - tick))));
    }
    // Let the last audits finish (up to 2 minutes), then a last sample.
    const deadline = Date.now() + 120_000;
    while (
      (await count({ workspace_id: workspace.id, status: 'running' })) +
        (await count({ workspace_id: workspace.id, status: 'queued' })) >
        0 &&
      Date.now() < deadline
    )
      await new Promise((r) => setTimeout(r, 1000));
    const last = await sample();
    samples.push(last);

    const first = samples[0]!;
    const tables = await db.raw<{ rows: Array<{ name: string; mb: number }> }>(
      `SELECT relname AS name, round(pg_total_relation_size(relid) / 1048576.0, 2) AS mb
         FROM pg_stat_user_tables ORDER BY pg_total_relation_size(relid) DESC LIMIT 8`,
    );
    // Live bytes an audit holds (row sizes, without indexes and free space), pruned or not.
    const perAudit = await db.raw<{ rows: Array<{ pruned: boolean; audits: number; kb: number }> }>(
      `WITH per AS (
         SELECT a.id, a.retention_pruned_at IS NOT NULL AS pruned,
                pg_column_size(a.*)
                + coalesce((SELECT sum(pg_column_size(x.*)) FROM audit_logs x WHERE x.audit_id = a.id), 0)
                + coalesce((SELECT sum(pg_column_size(x.*)) FROM audit_stages x WHERE x.audit_id = a.id), 0)
                + coalesce((SELECT sum(pg_column_size(x.*)) FROM audit_source_files x WHERE x.audit_id = a.id), 0)
                + coalesce((SELECT sum(pg_column_size(x.*)) FROM agent_runs x WHERE x.audit_id = a.id), 0)
                + coalesce((SELECT sum(pg_column_size(f.*)) FROM agent_artifacts f
                             WHERE f.id IN (SELECT artifact_id FROM agent_runs x WHERE x.audit_id = a.id)), 0)
                + coalesce((SELECT sum(pg_column_size(x.*)) FROM control_assessments x WHERE x.audit_id = a.id), 0)
                + coalesce((SELECT sum(pg_column_size(x.*)) FROM architecture_snapshots x WHERE x.audit_id = a.id), 0)
                + coalesce((SELECT sum(pg_column_size(e.*)) FROM architecture_evidence e
                             JOIN architecture_snapshots x ON x.id = e.snapshot_id WHERE x.audit_id = a.id), 0)
                + coalesce((SELECT sum(pg_column_size(x.*)) FROM change_sets x WHERE x.audit_id = a.id), 0)
                + coalesce((SELECT sum(pg_column_size(x.*)) FROM audit_gates x WHERE x.audit_id = a.id), 0)
                AS bytes
           FROM audits a WHERE a.workspace_id = ? AND a.status = 'completed')
       SELECT pruned, count(*) AS audits, round(avg(bytes) / 1024.0, 1) AS kb FROM per GROUP BY pruned`,
      [workspace.id],
    );
    for (const r of perAudit.rows)
      console.log(
        `live data per ${r.pruned ? 'pruned' : 'unpruned'} audit: ${r.kb} KB (${r.audits} audits)`,
      );
    console.log(
      '\nseconds  api MB  worker MB  api fds  worker fds  db MB  conns  done  failed  pruned',
    );
    for (const s of samples) {
      console.log(
        [
          s.seconds,
          s.apiRssMb,
          s.workerRssMb,
          s.apiFds,
          s.workerFds,
          s.dbMb,
          s.connections,
          s.completed,
          s.failed,
          s.pruned,
        ]
          .map((v, i) => String(v).padStart([7, 7, 10, 8, 11, 6, 6, 5, 7, 7][i]!))
          .join(' '),
      );
    }
    const finished = last.completed + last.failed;
    console.log(
      `\naudits sent ${sent}, completed ${last.completed}, failed ${last.failed}, request errors ${errors}, pruned ${last.pruned}`,
    );
    console.log(
      `database growth: ${(last.dbMb - first.dbMb).toFixed(1)} MB, ${finished ? Math.round(((last.dbMb - first.dbMb) * 1024) / finished) : 0} KB per finished audit`,
    );
    console.log('largest tables (MB):', tables.rows.map((r) => `${r.name} ${r.mb}`).join(', '));
    console.log(
      `load average: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} (${os.cpus().length} CPUs)`,
    );
  } catch (err) {
    console.error(err instanceof MissingToolError ? err.message : err);
    process.exitCode = 1;
  } finally {
    await cleanup();
  }
}

void main();
