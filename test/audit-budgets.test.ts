/**
 * Per-audit budgets through the real worker (issue 24), and the hostile probe's repository: one
 * docker-compose.yml of 10,000 services, each naming another in an environment URL and in
 * `depends_on`. Each budget at its limit lets the audit through; one past it ends the audit the
 * way the user reads it over the API: a `budget` coverage gap and a `partial` snapshot (files),
 * or `failed` with the budget's code on the stage, tried once (the rest).
 */
import test from 'ava';
import type { AuditBudgets } from '../domain/audits/budgets';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, type Tenant } from './helpers/factories';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { call } from './helpers/http';
import { largeComposeText } from './helpers/large-compose';

let h: AuditHarness;
let sample: TestRepo;
let large: TestRepo;
let defaults: AuditBudgets;

test.before(async () => {
  h = await startAuditHarness();
  defaults = { ...h.app.services.config.auditBudgets };
  sample = createRepo(SAMPLE_FILES);
  large = createRepo({ 'docker-compose.yml': largeComposeText(10_000) });
});

test.after.always(async () => {
  await h?.close();
  sample?.remove();
  large?.remove();
});

/** The worker reads its configuration object at each step: budgets apply from the next audit. */
function budgets(b: Partial<AuditBudgets>): void {
  Object.assign(h.app.services.config.auditBudgets, defaults, b);
}

/**
 * An audit of `dir` in a workspace of its own (no artifact cached by another test's audit) and
 * what a user reads of it: the audit, its snapshot (or the 404), its agent runs and logs.
 */
async function audit(dir: string, timeoutMs = 120_000) {
  const tenant: Tenant = await createTenant(h.app.services.db);
  const ws = `/v1/workspaces/${tenant.workspaceId}`;
  const get = (p: string) => call(h.app.url, 'GET', `${ws}${p}`, { token: tenant.token });
  const repo = await call(h.app.url, 'POST', `${ws}/repositories`, {
    token: tenant.token,
    body: { name: 'probe', url: `file://${dir}` },
  });
  if (repo.status !== 201) throw new Error(repo.text);
  const started = await call(h.app.url, 'POST', `${ws}/audits`, {
    token: tenant.token,
    body: { repository_id: repo.body.id },
  });
  if (started.status !== 202) throw new Error(started.text);
  const done = await waitForAudit(
    h.app.url,
    tenant.token,
    tenant.workspaceId,
    started.body.id,
    timeoutMs,
  );
  const id = started.body.id as string;
  return {
    audit: done.body,
    stage: (key: string) => done.body.stages.find((s: any) => s.key === key),
    architecture: () => get(`/audits/${id}/architecture`),
    runs: async () => (await get(`/audits/${id}/agent-runs`)).body.runs as any[],
    logs: async () => (await get(`/audits/${id}/logs?limit=200`)).body.items as any[],
    assessments: () => get(`/audits/${id}/assessments?limit=200`),
  };
}

/** The stage a budget failed, its runs with that code (attempt, status), and the audit's status. */
async function failure(run: Awaited<ReturnType<typeof audit>>, code: string) {
  const failed = run.audit.stages.filter((s: any) => s.error_code === code);
  const runs = (await run.runs()).filter((r) => r.error_code === code);
  return {
    status: run.audit.status,
    stages: failed.map((s: any) => [s.status, s.attempt]),
    runs: runs.map((r) => [r.attempt, r.status]),
  };
}

test.serial(
  'files: at the budget the audit reads everything; one file past it, a budget gap and a partial snapshot',
  async (t) => {
    const files = Object.keys(SAMPLE_FILES).length;
    budgets({ maxFiles: files });
    const at = await audit(sample.dir);
    t.is(at.audit.status, 'completed');
    t.false(at.audit.coverage_gaps.some((g: any) => g.kind === 'budget'));
    t.is(at.audit.source.file_count, files);
    const atTruth = await at.architecture();
    t.is(atTruth.body.status, 'complete', JSON.stringify(at.audit.coverage_gaps));

    budgets({ maxFiles: files - 1 });
    const past = await audit(sample.dir);
    t.is(past.audit.status, 'completed');
    t.is(past.audit.source.file_count, files - 1);
    const gap = past.audit.coverage_gaps.find((g: any) => g.kind === 'budget');
    t.like(gap, { kind: 'budget', budget: 'files', reason: 'budget_exceeded', limit: files - 1 });
    t.regex(gap.message, /^1 files beyond the audit's budget of \d+ files \(AUDIT_MAX_FILES\)/);
    const truth = await past.architecture();
    t.is(truth.status, 200);
    t.is(truth.body.status, 'partial');
  },
);

test.serial(
  'evidence and entities: at the budget the audit completes; one past it fails at reconcile, tried once',
  async (t) => {
    budgets({});
    const free = await audit(sample.dir);
    t.is(free.audit.status, 'completed');
    const truth = (await free.architecture()).body;
    const evidence = truth.evidence.length as number;
    const entities = truth.entity_count as number;
    t.true(evidence > 0 && entities > 0);

    budgets({ maxEvidence: evidence, maxEntities: entities });
    t.is((await audit(sample.dir)).audit.status, 'completed');

    budgets({ maxEvidence: evidence - 1 });
    const overEvidence = await audit(sample.dir);
    t.deepEqual(await failure(overEvidence, 'evidence_budget_exceeded'), {
      status: 'failed',
      stages: [['failed', 1]],
      runs: [[1, 'failed']],
    });
    t.is(overEvidence.stage('reconcile').error_code, 'evidence_budget_exceeded');
    t.is((await overEvidence.architecture()).status, 404, 'no snapshot is stored');
    t.true(
      (await overEvidence.logs()).some(
        (l) =>
          l.level === 'error' &&
          /over the audit's budget of \d+ \(AUDIT_MAX_EVIDENCE\)/.test(l.details?.error ?? ''),
      ),
    );

    budgets({ maxEntities: entities - 1 });
    const overEntities = await audit(sample.dir);
    t.deepEqual(await failure(overEntities, 'entity_budget_exceeded'), {
      status: 'failed',
      stages: [['failed', 1]],
      runs: [[1, 'failed']],
    });
    t.is(overEntities.stage('reconcile').error_code, 'entity_budget_exceeded');
  },
);

test.serial(
  'output size: an analysis result past the budget fails the audit with output_budget_exceeded, tried once',
  async (t) => {
    budgets({ maxOutputBytes: 64 });
    const run = await audit(sample.dir);
    const f = await failure(run, 'output_budget_exceeded');
    t.is(f.status, 'failed');
    t.true(f.stages.length >= 1);
    t.true(f.runs.length >= 1);
    t.true(
      f.runs.every((r: any[]) => r[0] === 1),
      JSON.stringify(f.runs),
    );
  },
);

test.serial(
  'analysis time: past the budget the running analysis is ended and the audit fails, tried once',
  async (t) => {
    // One second: the 10,000-service file takes the cloud analyzer many times longer.
    t.timeout(300_000);
    budgets({ analysisSeconds: 1 });
    const run = await audit(large.dir, 300_000);
    const f = await failure(run, 'analysis_time_budget_exceeded');
    t.is(f.status, 'failed');
    // The cloud analysis certainly runs past it; on a loaded machine a sibling step may too.
    t.is(run.stage('cloud').error_code, 'analysis_time_budget_exceeded');
    t.true(f.stages.every((st: any[]) => st[0] === 'failed' && st[1] === 1));
    t.true(f.runs.length >= 1);
    t.true(f.runs.every((r: any[]) => r[0] === 1 && r[1] === 'failed'));
  },
);
