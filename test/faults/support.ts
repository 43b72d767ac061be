/**
 * What every fault test checks once its fault is over and its audits have finished: nothing
 * stuck, nothing twice (audits per key, stages, evidence, successful attempts), versions unique,
 * and every snapshot identical to the one a fault-free audit of the same commit made.
 */
import crypto from 'node:crypto';
import type { ExecutionContext } from 'ava';
import type { Knex } from 'knex';
import { waitForAudit, type AuditHarness } from '../helpers/audit-harness';
import { createTenant, type Tenant } from '../helpers/factories';
import { createRepo, SAMPLE_FILES, type TestRepo } from '../helpers/git';
import { call } from '../helpers/http';

export interface World {
  h: AuditHarness;
  tenant: Tenant;
  repo: TestRepo;
  repositoryId: string;
  ws: string;
  /** The API the test talks to (the harness's, unless the test runs its own API process). */
  url: string;
}

export async function makeWorld(h: AuditHarness): Promise<World> {
  const tenant = await createTenant(h.app.services.db);
  const repo = createRepo(SAMPLE_FILES);
  const ws = `/v1/workspaces/${tenant.workspaceId}`;
  const created = await call(h.app.url, 'POST', `${ws}/repositories`, {
    token: tenant.token,
    body: { name: 'shop', url: `file://${repo.dir}` },
  });
  if (created.status !== 201) throw new Error(created.text);
  return { h, tenant, repo, repositoryId: created.body.id, ws, url: h.app.url };
}

/** Starts an audit of the repository's head; its id. */
export async function startAudit(w: World, headers: Record<string, string> = {}): Promise<string> {
  const reply = await call(w.url, 'POST', `${w.ws}/audits`, {
    token: w.tenant.token,
    headers,
    body: { repository_id: w.repositoryId },
  });
  if (reply.status !== 202) throw new Error(`createAudit ${reply.status}: ${reply.text}`);
  return reply.body.id;
}

export async function waitAll(w: World, ids: string[], timeoutMs = 240_000): Promise<void> {
  for (const id of ids)
    await waitForAudit(w.url, w.tenant.token, w.tenant.workspaceId, id, timeoutMs);
}

/** A fault-free audit of the repository's head: the snapshot every faulted audit must equal. */
export async function faultFreeSnapshot(w: World): Promise<{ hash: string; evidence: number }> {
  const id = await startAudit(w);
  await waitAll(w, [id]);
  return snapshotDigest(w, id);
}

/** Starts `n` audits; resolves with their ids once one of their attempts runs (time to strike). */
export async function auditsInFlight(w: World, n = 3): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push(await startAudit(w));
  await attemptsRunning(w.h.app.services.db, ids);
  return ids;
}

/** Resolves once some agent attempt of these audits is running. */
async function attemptsRunning(db: Knex, ids: string[], timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const row = await db('agent_runs')
      .whereIn('audit_id', ids)
      .where({ status: 'running' })
      .first();
    if (row) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no agent attempt started');
}

/** Keys whose values differ between two runs of the same commit (ids, times, versions). */
const VOLATILE = /(^id$|_id$|_ids$|_at$|^version$|^audit$)/;

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map(canonical).sort((a, b) => {
      const x = JSON.stringify(a);
      const y = JSON.stringify(b);
      return x < y ? -1 : x > y ? 1 : 0;
    });
  }
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([k]) => !VOLATILE.test(k))
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, v]) => [k, canonical(v)]),
    );
  }
  return value;
}

/** The audit's snapshot (entities, relationships, evidence) without ids and times, hashed. */
export async function snapshotDigest(
  w: World,
  auditId: string,
): Promise<{ hash: string; evidence: number }> {
  const arch = await call(w.url, 'GET', `${w.ws}/audits/${auditId}/architecture`, {
    token: w.tenant.token,
  });
  if (arch.status !== 200) throw new Error(`architecture of ${auditId}: ${arch.text}`);
  const { entities, relationships, evidence } = arch.body;
  const hash = crypto
    .createHash('sha256')
    .update(JSON.stringify(canonical({ entities, relationships, evidence })))
    .digest('hex');
  return { hash, evidence: evidence.length };
}

/**
 * The invariants after a fault, over the workspace's audits: all completed (none stuck), nine
 * stages each, at most one successful non-cached attempt per agent, versions unique, evidence
 * without repeats, and each snapshot equal to `reference`'s.
 */
export async function checkInvariants(
  t: ExecutionContext,
  w: World,
  reference: { hash: string; evidence: number },
): Promise<void> {
  const db = w.h.app.services.db;
  const ws = w.tenant.workspaceId;
  const audits = await db('audits').where({ workspace_id: ws }).select('id', 'status');
  t.deepEqual(
    audits.filter((a) => a.status !== 'completed'),
    [],
    'every audit completed: none stuck, none failed',
  );
  const stages = await db('audit_stages')
    .join('audits', 'audits.id', 'audit_stages.audit_id')
    .where('audits.workspace_id', ws)
    .groupBy('audit_stages.audit_id')
    .select('audit_stages.audit_id')
    .count('* as n');
  t.true(
    stages.length === audits.length && stages.every((s) => Number(s.n) === 9),
    'nine stages per audit',
  );
  const doubled = await db('agent_runs')
    .where({ workspace_id: ws, status: 'succeeded', cache_hit: false })
    .groupBy('audit_id', 'agent_key')
    .havingRaw('count(*) > 1')
    .select('audit_id', 'agent_key');
  t.deepEqual(doubled, [], 'no agent ran to success twice in one audit');
  const versions = await db('architecture_snapshots')
    .where({ workspace_id: ws })
    .groupBy('repository_id', 'version')
    .havingRaw('count(*) > 1')
    .select('version');
  t.deepEqual(versions, [], 'snapshot versions are unique');
  const repeated = await db.raw<{ rows: unknown[] }>(
    `SELECT snapshot_id FROM architecture_evidence WHERE workspace_id = ?
      GROUP BY snapshot_id, source_type, provider, evidence_kind, subject_key,
               relationship_kind, object_key, location::text, content_sha256
     HAVING count(*) > 1`,
    [ws],
  );
  t.deepEqual(repeated.rows, [], 'no evidence row twice');
  for (const a of audits) t.deepEqual(await snapshotDigest(w, a.id), reference, a.id);
}

/**
 * What an outage must not cost (issue 29): agent attempts past the first, stages retried, and
 * stages whose `attempt` is not the highest of their agents' attempts (an untruthful count).
 */
export async function spentAttempts(
  db: Knex,
  workspaceId: string,
): Promise<{ retriedAgents: unknown[]; retriedStages: unknown[]; untruthful: unknown[] }> {
  const retriedAgents = await db('agent_runs')
    .where({ workspace_id: workspaceId })
    .andWhere('attempt', '>', 1)
    .select('audit_id', 'agent_key', 'attempt', 'status', 'error_code');
  const retriedStages = await db('audit_stages')
    .join('audits', 'audits.id', 'audit_stages.audit_id')
    .where('audits.workspace_id', workspaceId)
    .andWhere('audit_stages.attempt', '>', 1)
    .select('audit_stages.audit_id', 'audit_stages.key', 'audit_stages.attempt');
  const untruthful = await db.raw<{ rows: unknown[] }>(
    `SELECT s.audit_id, s.key, s.attempt, max(r.attempt) AS agents
       FROM audit_stages s
       JOIN audits a ON a.id = s.audit_id
       JOIN agent_runs r ON r.audit_id = s.audit_id AND r.stage = s.key
      WHERE a.workspace_id = ?
      GROUP BY s.audit_id, s.key, s.attempt
     HAVING s.attempt <> max(r.attempt)`,
    [workspaceId],
  );
  return { retriedAgents, retriedStages, untruthful: untruthful.rows };
}
