/**
 * An agent failing for good in the middle of a stage: the stage is marked failed with the
 * agent's code and the summaries of the steps before it, the stages running beside it finish,
 * the later stages are skipped, and the audit fails with that code.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { appendLog } from '../db/audits';
import { STORED_TEXT_LIMIT } from '../domain/text';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, type Tenant } from './helpers/factories';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { call } from './helpers/http';
import { brokenAgent } from './fixtures/test-agents';

let h: AuditHarness;
let tenant: Tenant;
let repo: TestRepo;

test.before(async () => {
  h = await startAuditHarness({ extraAgents: [brokenAgent] });
  tenant = await createTenant(h.app.services.db);
  repo = createRepo(SAMPLE_FILES);
});

test.after.always(async () => {
  await h?.close();
  repo?.remove();
});

const ws = () => `/v1/workspaces/${tenant.workspaceId}`;

/** Registers `dir` as a repository and starts its audit; returns the 202 reply. */
async function auditOf(name: string, dir: string) {
  const created = await call(h.app.url, 'POST', `${ws()}/repositories`, {
    token: tenant.token,
    body: { name, url: `file://${dir}` },
  });
  if (created.status !== 201) throw new Error(created.text);
  return call(h.app.url, 'POST', `${ws()}/audits`, {
    token: tenant.token,
    body: { repository_id: created.body.id },
  });
}

// Serial (ava runs serial tests first): the other tests audit the same files in this workspace,
// and an artifact cached from their runs would change the stage summaries checked here.
test.serial(
  'a non-retryable agent failure fails its stage and the audit; parallel stages finish, later ones are skipped',
  async (t) => {
    const started = await auditOf('shop', repo.dir);
    t.is(started.status, 202);
    const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, started.body.id);
    const audit = done.body;
    t.is(audit.status, 'failed');
    const byKey = Object.fromEntries(audit.stages.map((s: any) => [s.key, s]));
    for (const key of ['source', 'inventory', 'code', 'cloud'])
      t.like(byKey[key], { status: 'completed', attempt: 1 }, key);
    t.like(byKey.cicd, { status: 'failed', error_code: 'broken_on_purpose', attempt: 1 });
    // The summaries of the two steps before the failure (cicd-inventory, cicd-analyzer).
    t.regex(byKey.cicd.summary, /^1 cicd files .*; .*evidence records/);
    t.truthy(byKey.cicd.completed_at);
    for (const key of ['reconcile', 'controls', 'changes', 'report'])
      t.is(byKey[key].status, 'skipped', key);

    const runs = await call(h.app.url, 'GET', `${ws()}/audits/${audit.id}/agent-runs`, {
      token: tenant.token,
    });
    const broken = runs.body.runs.filter((r: any) => r.agent_key === 'broken-test-agent');
    t.deepEqual(
      broken.map((r: any) => [r.attempt, r.status, r.error_code]),
      [[1, 'failed', 'broken_on_purpose']],
      'a non-retryable failure is not retried',
    );
    const logs = await call(h.app.url, 'GET', `${ws()}/audits/${audit.id}/logs?limit=200`, {
      token: tenant.token,
    });
    const messages: string[] = logs.body.items.map((l: any) => l.message);
    t.is(messages.filter((m) => m.startsWith('stage cicd failed (broken_on_purpose)')).length, 1);
    t.is(messages.filter((m) => m === 'audit failed (broken_on_purpose)').length, 1);
  },
);

test('a source repository with a corrupt object fails the audit once as repository_corrupt, with git stderr kept', async (t) => {
  const damaged = createRepo(SAMPLE_FILES);
  t.teardown(() => damaged.remove());
  // Overwrite one loose blob with bytes that are no zlib stream: git upload-pack on the
  // repository's side cannot read it ("possible repository corruption on the remote side").
  const blob = damaged.git('rev-parse', 'HEAD:README.md');
  const file = path.join(damaged.dir, '.git', 'objects', blob.slice(0, 2), blob.slice(2));
  fs.chmodSync(file, 0o644);
  fs.writeFileSync(file, Buffer.from('garbage\u0000not zlib'));

  const started = await auditOf('damaged', damaged.dir);
  t.is(started.status, 202, started.text);
  const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, started.body.id);
  t.is(done.body.status, 'failed');
  const source = done.body.stages.find((s: any) => s.key === 'source');
  t.like(source, { status: 'failed', error_code: 'repository_corrupt', attempt: 1 });

  const logs = await call(h.app.url, 'GET', `${ws()}/audits/${done.body.id}/logs?limit=200`, {
    token: tenant.token,
  });
  const failure = logs.body.items.find(
    (l: any) => l.level === 'error' && l.details?.error_code === 'repository_corrupt',
  );
  t.truthy(failure, JSON.stringify(logs.body.items));
  t.regex(failure.message, /is damaged: .*corrupt/);
  t.regex(failure.details.stderr, new RegExp(`loose object ${blob}`));
  t.is(
    logs.body.items.filter((l: any) => l.message === 'audit failed (repository_corrupt)').length,
    1,
  );
});

test('text recorded from tools is stored with NUL and unpaired surrogates replaced, and bounded', async (t) => {
  const started = await auditOf('texts', repo.dir);
  const auditId = started.body.id as string;
  await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, auditId);
  // What git's stderr can hold: NUL, a lone surrogate, a huge message. The row is written.
  await appendLog(h.app.services.db, auditId, {
    level: 'error',
    source: 'stage',
    message: `remote: fatal\u0000 bad \ud800 object ${'x'.repeat(STORED_TEXT_LIMIT * 2)}`,
    details: { stderr: 'a\u0000b', 'key\u0000': '\udc00', nested: ['\u0000'] },
  });
  const logs = await call(h.app.url, 'GET', `${ws()}/audits/${auditId}/logs?limit=200`, {
    token: tenant.token,
  });
  t.is(logs.status, 200, logs.text);
  const line = logs.body.items.find((l: any) => l.message.startsWith('remote: fatal'));
  t.truthy(line);
  t.true(line.message.startsWith('remote: fatal\ufffd bad \ufffd object xxx'));
  t.is(line.message.length, STORED_TEXT_LIMIT);
  t.true(line.message.endsWith('\u2026'));
  t.deepEqual(line.details, { stderr: 'a\ufffdb', 'key\ufffd': '\ufffd', nested: ['\ufffd'] });
});
