/**
 * A decision's whole life against real audits and a real Temporal worker: proposed ->
 * in_review -> approved -> implemented -> verified by the next audit snapshot (and a decision
 * whose criterion is unmet staying implemented until a later snapshot meets it); the review
 * wait surviving a killed worker, with reminders in the activity feed.
 */
import { recordHistory } from './helpers/histories';
import { decisionWorkflowId } from '../domain/contract/workflows';
import fs from 'node:fs';
import path from 'node:path';
import { spawnWorker, stopProcess } from './helpers/worker-process';
import { buildWorkflowBundle } from '../worker/bundle';
import test from 'ava';
import { startAuditHarness, type AuditHarness } from './helpers/audit-harness';
import { call } from './helpers/http';
import { SAMPLE_FILES } from './helpers/git';
import {
  auditRepository,
  decisionWorld,
  getDecision,
  move,
  propose,
  waitForDecision,
  type DecisionWorld,
} from './helpers/decisions';
import { setPolicy } from '../db/decisions';
import { stateQuery } from '../workflows/decisions';

const harnesses: AuditHarness[] = [];
const worlds: DecisionWorld[] = [];

test.after.always(async () => {
  for (const h of harnesses) await h.close();
  for (const w of worlds) w.repo.remove();
});

const criterion = (id: string, check: Record<string, unknown>) => ({
  id,
  description: `criterion ${id}`,
  check,
});

const COMPOSE_WITH = (extra: string) => `${SAMPLE_FILES['docker-compose.yml']}${extra}`;
const LEDGER =
  '  ledger:\n    image: ghcr.io/acme/ledger:1.0.0\n    environment:\n      DATABASE_URL: postgres://db:5432/ledger\n';
const BILLING = '  billing:\n    image: ghcr.io/acme/billing:2.0.0\n';

test('proposed -> in_review -> approved -> implemented -> verified by the next snapshot; an unmet criterion waits for a later one', async (t) => {
  const h = await startAuditHarness();
  harnesses.push(h);
  const w = await decisionWorld(h);
  worlds.push(w);

  const met = await propose(w, {
    title: 'Add a ledger service',
    success_criteria: [
      criterion('ledger', { kind: 'entity_present', key: 'service:ledger' }),
      criterion('api', { kind: 'entity_present', key: 'service:api' }),
      criterion('no-cache', { kind: 'entity_absent', key: 'datastore:memcached' }),
      criterion('db-alias', {
        kind: 'attribute_equals',
        key: 'datastore:db',
        field: 'aliases',
        value: ['service:db'],
      }),
      criterion('api-db', {
        kind: 'relationship_present',
        key: 'connects_to:service:api->datastore:db',
      }),
      criterion('no-loop', {
        kind: 'relationship_absent',
        key: 'calls:service:ledger->service:ledger',
      }),
    ],
  });
  t.is(met.status, 201, met.text);
  const unmet = await propose(w, {
    title: 'Add a billing service',
    success_criteria: [
      criterion('billing', { kind: 'entity_present', key: 'service:billing' }),
      criterion('api', { kind: 'entity_present', key: 'service:api' }),
    ],
  });
  t.is(unmet.status, 201, unmet.text);

  for (const id of [met.body.id, unmet.body.id]) {
    const steps: Array<[string, string, Record<string, unknown>, string]> = [
      ['in_review', w.proposer.token, {}, 'in_review'],
      ['approved', w.bob.token, { selected_option_id: 'postgres' }, 'approved'],
      ['implemented', w.proposer.token, {}, 'implemented'],
    ];
    let version = 1;
    for (const [to, token, extra, expected] of steps) {
      const r = await move(w, id, to, token, extra);
      t.is(r.status, 200, `${to}: ${r.text}`);
      t.is(r.body.status, expected);
      t.is(r.body.version, ++version);
    }
  }
  // No snapshot completed after implementation yet: nothing is evaluated.
  await new Promise((r) => setTimeout(r, 1000));
  const waiting = (await getDecision(w, met.body.id)).body;
  t.is(waiting.status, 'implemented');
  t.truthy(waiting.implemented_at);
  t.is(waiting.verification_result, null);
  t.true(waiting.success_criteria.every((c: any) => c.status === 'pending'));

  // The change lands and a new audit completes: the ledger exists, billing does not yet.
  w.repo.commit({ 'docker-compose.yml': COMPOSE_WITH(LEDGER) }, 'add ledger');
  const second = await auditRepository(w);
  const verified = await waitForDecision(w, met.body.id, (d) => d.status === 'verified');
  t.is(verified.verification_snapshot_id, second.snapshotId);
  t.truthy(verified.verified_at);
  t.is(verified.version, 5);
  t.is(verified.verification_result.outcome, 'verified');
  t.is(verified.verification_result.snapshot_id, second.snapshotId);
  await recordHistory(
    await h.app.services.temporal.client(),
    decisionWorkflowId(met.body.id),
    'decision-verified',
  );
  const arch = await call(h.app.url, 'GET', `${w.ws}/audits/${second.auditId}/architecture`, {
    token: w.tenant.token,
  });
  const evidence = new Set(arch.body.evidence.map((e: any) => e.id));
  for (const c of verified.success_criteria) {
    t.is(c.status, 'met', c.id);
    t.truthy(c.evaluated_at);
    t.true(
      c.evidence_ids.every((e: string) => evidence.has(e)),
      `${c.id} cites the new snapshot`,
    );
  }
  const byId = Object.fromEntries(verified.success_criteria.map((c: any) => [c.id, c]));
  const ledger = arch.body.entities.find((e: any) => e.canonical_key === 'service:ledger');
  t.deepEqual(byId.ledger.evidence_ids, ledger.evidence_ids);
  t.true(byId.ledger.evidence_ids.length > 0);
  t.deepEqual(byId['no-cache'].evidence_ids, [], 'an absent entity has no evidence');
  t.deepEqual(verified.verification_result.criteria, verified.success_criteria);

  const failed = await waitForDecision(
    w,
    unmet.body.id,
    (d) => d.verification_snapshot_id === second.snapshotId,
  );
  t.is(failed.status, 'implemented', 'stays implemented');
  t.is(failed.verified_at, null);
  t.is(failed.verification_result.outcome, 'failed');
  t.deepEqual(
    failed.success_criteria.map((c: any) => [c.id, c.status]),
    [
      ['billing', 'unmet'],
      ['api', 'met'],
    ],
  );
  t.deepEqual(failed.success_criteria[0].evidence_ids, []);
  t.true(failed.success_criteria[1].evidence_ids.length > 0);

  // The next snapshot has billing: the same decision is evaluated again and verified.
  w.repo.commit({ 'docker-compose.yml': COMPOSE_WITH(LEDGER + BILLING) }, 'add billing');
  const third = await auditRepository(w);
  const later = await waitForDecision(w, unmet.body.id, (d) => d.status === 'verified');
  t.is(later.verification_snapshot_id, third.snapshotId);
  t.true(later.success_criteria.every((c: any) => c.status === 'met'));
  // A verified decision is not evaluated again.
  t.is((await getDecision(w, met.body.id)).body.verification_snapshot_id, second.snapshotId);

  const feed = await call(h.app.url, 'GET', `${w.ws}/activity?limit=200`, {
    token: w.tenant.token,
  });
  const actions = feed.body.items
    .filter((i: any) => i.resource_id === unmet.body.id)
    .map((i: any) => i.action);
  t.true(actions.includes('decision.verification_failed'));
  t.true(actions.includes('decision.verified'));

  const brief = await call(h.app.url, 'GET', `${w.ws}/decisions/${unmet.body.id}/brief`, {
    token: w.tenant.token,
  });
  t.true(
    brief.body.markdown.includes(`Outcome **verified** against snapshot \`${third.snapshotId}\``),
  );
  t.true(brief.body.markdown.includes('| implemented | verified | system |'));
});

test('the review wait survives a killed worker: reminders while waiting, the approval lands on the new worker (started from the workflow bundle)', async (t) => {
  const h = await startAuditHarness({ worker: false });
  harnesses.push(h);
  let worker = await spawnWorker(h);
  try {
    const w = await decisionWorld(h);
    worlds.push(w);
    const policy = await setPolicy(h.app.services.db, w.tenant.workspaceId, {
      reminder_interval_seconds: 2,
    });
    const created = await propose(w);
    t.is(created.status, 201, created.text);
    const id = created.body.id;
    t.is((await move(w, id, 'in_review', w.proposer.token)).status, 200);

    const reminders = async () => {
      const feed = await call(h.app.url, 'GET', `${w.ws}/activity?limit=200`, {
        token: w.tenant.token,
      });
      return feed.body.items.filter(
        (i: any) => i.action === 'decision.review_reminder' && i.resource_id === id,
      );
    };
    const deadline = Date.now() + 20_000;
    while ((await reminders()).length === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 250));
    const first = await reminders();
    t.true(first.length >= 1, 'a reminder after the interval');
    t.like(first[0].details, { quorum: 1, approvals: 0, reminder_interval_seconds: 2 });
    t.is(first[0].actor_login, 'system');

    // The new worker is production-shaped: its workflow code is the pre-built bundle (built
    // first: bundling takes long enough under load to outlast the move's 30 s wait).
    const bundle = path.join(h.dir, 'workflow-bundle.js');
    fs.writeFileSync(bundle, await buildWorkflowBundle());
    await stopProcess(worker, 'SIGKILL');
    // The approval is asked for while no worker runs; it lands once one is back.
    const approving = move(w, id, 'approved', w.bob.token, { selected_option_id: 'dynamo' });
    t.is((await getDecision(w, id)).body.status, 'in_review', 'nothing moves without a worker');
    worker = await spawnWorker(h, { WORKFLOW_BUNDLE: bundle });
    const approved = await approving;
    t.is(approved.status, 200, approved.text);
    t.is(approved.body.status, 'approved');
    t.is(approved.body.selected_option_id, 'dynamo');
    t.is(approved.body.approvals.length, 1);
    t.is(approved.body.approvals[0].policy_version, policy.version);

    // The decision moves on: no reminders once approved, and it can be implemented.
    const count = (await reminders()).length;
    const implemented = await move(w, id, 'implemented', w.proposer.token);
    t.is(implemented.status, 200, implemented.text);
    t.is(implemented.body.status, 'implemented');
    await new Promise((r) => setTimeout(r, 3000));
    t.is((await reminders()).length, count, 'the review wait ended');

    const client = await h.app.services.temporal.client();
    const described = await client.workflow.getHandle(`decision-${id}`).describe();
    t.is(described.status.name, 'RUNNING', 'waiting for verification');
    t.deepEqual(await client.workflow.getHandle(`decision-${id}`).query(stateQuery), {
      status: 'implemented',
      reviewRound: 1,
      votedThisRound: [w.bob.id],
    });
  } finally {
    await stopProcess(worker, 'SIGTERM');
  }
});

test('a long review continues as new before its history grows too long, and the decision carries on in the new run', async (t) => {
  const h = await startAuditHarness({ config: { decisionHistoryLimit: 40 } });
  harnesses.push(h);
  const w = await decisionWorld(h);
  worlds.push(w);
  await setPolicy(h.app.services.db, w.tenant.workspaceId, { reminder_interval_seconds: 1 });
  const created = await propose(w);
  t.is(created.status, 201, created.text);
  const id = created.body.id;
  t.is((await move(w, id, 'in_review', w.proposer.token)).status, 200);

  // Reminders add events until the run continues as new.
  const client = await h.app.services.temporal.client();
  const handle = client.workflow.getHandle(`decision-${id}`);
  const firstRunId = (await handle.describe()).runId;
  const deadline = Date.now() + 30_000;
  while ((await handle.describe()).runId === firstRunId && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 250));
  const latest = await handle.describe();
  t.not(latest.runId, firstRunId, 'a new run');
  t.is(latest.status.name, 'RUNNING');
  const first = await client.workflow.getHandle(`decision-${id}`, firstRunId).describe();
  t.is(first.status.name, 'CONTINUED_AS_NEW');
  t.true(first.historyLength < 60, `the first run stopped near the limit: ${first.historyLength}`);

  // The new run holds the state and keeps reminding; moves go to it.
  t.deepEqual(await handle.query(stateQuery), {
    status: 'in_review',
    reviewRound: 1,
    votedThisRound: [],
  });
  const remindersOf = async () => {
    const feed = await call(h.app.url, 'GET', `${w.ws}/activity?limit=200`, {
      token: w.tenant.token,
    });
    return feed.body.items.filter(
      (i: any) => i.action === 'decision.review_reminder' && i.resource_id === id,
    ).length;
  };
  const before = await remindersOf();
  await new Promise((r) => setTimeout(r, 2500));
  t.true((await remindersOf()) > before, 'reminders go on in the new run');
  const approved = await move(w, id, 'approved', w.bob.token, { selected_option_id: 'dynamo' });
  t.is(approved.status, 200, approved.text);
  t.like(approved.body, { status: 'approved', selected_option_id: 'dynamo' });
  const implemented = await move(w, id, 'implemented', w.proposer.token);
  t.is(implemented.status, 200, implemented.text);
  t.like((await getDecision(w, id)).body, { status: 'implemented' });
  t.like(await handle.query(stateQuery), { status: 'implemented', reviewRound: 1 });
});
