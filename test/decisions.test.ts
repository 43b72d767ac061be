/**
 * Architecture decisions through the REST API, against a real DecisionWorkflow on the test
 * Temporal server: proposal bounds and references, the state machine (every illegal move from
 * every state), approvals (scope, self-approval, quorum), If-Match, tenancy, lists, supersession
 * and the brief.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import test from 'ava';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { transitionUpdate } from '../workflows/decisions';
import { startAuditHarness, type AuditHarness } from './helpers/audit-harness';
import { createTenant, createToken } from './helpers/factories';
import { call, isProblem, type Reply } from './helpers/http';
import {
  auditRepository,
  decisionWorld,
  getDecision,
  move,
  propose,
  proposal,
  waitForDecision,
  type DecisionWorld,
} from './helpers/decisions';
import { createDb } from '../db/connection';
import { policyOf, setPolicy } from '../db/decisions';
import { TemporalGateway } from '../platform/temporal';
import { REQUESTABLE_MOVES, type DecisionStatus } from '../domain/decisions/rules';
import { DECISION_STATES } from '../domain/contract/values';

let h: AuditHarness;
let w: DecisionWorld;

test.before(async () => {
  h = await startAuditHarness();
  w = await decisionWorld(h);
});

test.after.always(async () => {
  await h?.close();
  w?.repo.remove();
});

const paths = (reply: Reply): string[] =>
  ((reply.body?.errors ?? []) as Array<{ path: string }>).map((e) => e.path);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Proposes and moves a decision to `state` through the API (bob approves). */
async function decisionIn(state: DecisionStatus, over: Record<string, unknown> = {}) {
  const created = await propose(w, over);
  if (created.status !== 201) throw new Error(created.text);
  const id = created.body.id as string;
  const steps: Array<[string, string, Record<string, unknown>]> = [];
  if (state !== 'proposed') steps.push(['in_review', w.proposer.token, {}]);
  if (['approved', 'implemented', 'verified', 'superseded'].includes(state))
    steps.push(['approved', w.bob.token, { selected_option_id: 'postgres' }]);
  if (state === 'rejected') steps.push(['rejected', w.bob.token, {}]);
  if (state === 'implemented' || state === 'verified')
    steps.push(['implemented', w.proposer.token, {}]);
  for (const [to, token, extra] of steps) {
    const r = await move(w, id, to, token, extra);
    if (r.status !== 200) throw new Error(`${to}: ${r.text}`);
  }
  return id;
}

test.serial('proposeDecision: 201, version 1, pending criteria, a running workflow', async (t) => {
  const reply = await propose(w, {
    candidate_change_id: 'chg-1',
    affected_entity_keys: ['service:api'],
    uncertainties: [{ subject_key: 'service:api', description: 'who owns it', blocking: false }],
  });
  t.is(reply.status, 201, reply.text);
  const d = reply.body;
  t.regex(d.id, UUID);
  t.is(reply.headers.get('location'), `${w.ws}/decisions/${d.id}`);
  t.is(d.status, 'proposed');
  t.is(d.version, 1);
  t.is(d.repository_id, w.repositoryId, "the snapshot's repository");
  t.is(d.snapshot_id, w.snapshotId);
  t.is(d.created_by, w.proposer.id);
  t.is(d.candidate_change_id, 'chg-1');
  t.deepEqual(d.affected_entity_keys, ['service:api']);
  t.deepEqual(d.affected_relationship_keys, []);
  t.deepEqual(d.approvals, []);
  t.deepEqual(
    d.success_criteria.map((c: any) => [c.id, c.status, c.evaluated_at, c.evidence_ids]),
    [['api-present', 'pending', null, []]],
  );
  t.is(d.verification_result, null);

  const client = await h.app.services.temporal.client();
  const described = await client.workflow.getHandle(`decision-${d.id}`).describe();
  t.is(described.status.name, 'RUNNING');
  t.is(described.type, 'DecisionWorkflow');

  const events = await call(h.app.url, 'GET', `${w.ws}/audit-events`, { token: w.proposer.token });
  t.true(
    events.body.items.some((e: any) => e.action === 'decision.proposed' && e.resource_id === d.id),
  );
  const feed = await call(h.app.url, 'GET', `${w.ws}/activity`, { token: w.proposer.token });
  t.true(feed.body.items.some((e: any) => e.action === 'decision.proposed'));
});

test.serial(
  'proposeDecision commits the decision before it starts the workflow, which reads it at once',
  async (t) => {
    // A connection of its own: it sees only what the request's transaction has committed.
    const observer = createDb(h.app.database.url, { max: 1 });
    const client = await h.app.services.temporal.client();
    const realStart = client.workflow.start.bind(client.workflow);
    const atStart: Array<{ workflowId: string; status: string | null; history: string[] }> = [];
    client.workflow.start = (async (...args: Parameters<typeof realStart>) => {
      const workflowId = args[1].workflowId;
      const decisionId = workflowId.replace(/^decision-/, '');
      const row = await observer('decisions').where({ id: decisionId }).first('status');
      const history = await observer('decision_transitions')
        .where({ decision_id: decisionId })
        .pluck('to_status');
      atStart.push({ workflowId, status: row?.status ?? null, history });
      return realStart(...args);
    }) as typeof client.workflow.start;
    let id: string;
    try {
      const reply = await propose(w);
      t.is(reply.status, 201, reply.text);
      id = reply.body.id;
    } finally {
      delete (client.workflow as { start?: unknown }).start;
      await observer.destroy();
    }
    t.deepEqual(atStart, [
      { workflowId: `decision-${id}`, status: 'proposed', history: ['proposed'] },
    ]);
    // The workflow's first activity (applying a move) finds the row.
    const moved = await move(w, id, 'in_review', w.proposer.token);
    t.is(moved.status, 200, moved.text);
    t.is(moved.body.status, 'in_review');
  },
);

test.serial(
  'a decision whose workflow cannot be started is discarded: 503 naming it, no decision, an audit trail',
  async (t) => {
    const real = h.app.services.temporal;
    // The real Temporal server refuses the start: the namespace does not exist.
    const refusing = new TemporalGateway(real.address, `no-such-namespace-${Date.now()}`);
    h.app.services.temporal = refusing;
    let reply: Reply;
    try {
      reply = await propose(w, { title: 'Never started' });
    } finally {
      h.app.services.temporal = real;
      await refusing.close();
    }
    t.is(reply.status, 503, reply.text);
    t.true(isProblem(reply));
    t.is(reply.body.code, 'workflow_engine_unavailable');
    t.regex(reply.body.detail, /could not be started, so the proposal was discarded/);
    const id = reply.body.decision_id as string;
    t.regex(id, UUID);

    t.is((await getDecision(w, id)).status, 404);
    const list = await call(h.app.url, 'GET', `${w.ws}/decisions?limit=200`, {
      token: w.proposer.token,
    });
    t.false(list.body.items.some((d: any) => d.id === id || d.title === 'Never started'));
    const client = await real.client();
    await t.throwsAsync(client.workflow.getHandle(`decision-${id}`).describe(), {
      instanceOf: WorkflowNotFoundError,
    });
    const events = await call(h.app.url, 'GET', `${w.ws}/audit-events?limit=10`, {
      token: w.proposer.token,
    });
    const trail = (events.body.items as any[])
      .filter((e) => e.resource_id === id)
      .map((e) => [e.action, e.details.reason ?? null]);
    t.deepEqual(trail, [
      ['decision.discarded', 'workflow_start_failed'],
      ['decision.proposed', null],
    ]);
    t.true(h.app.logs().includes('could not start the decision workflow'));

    // Once Temporal answers again, the same proposal goes through.
    const again = await propose(w, { title: 'Never started' });
    t.is(again.status, 201, again.text);
  },
);

const str = (n: number) => 'x'.repeat(n);
const option = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  title: `Option ${id}`,
  description: 'An option.',
  ...extra,
});
const options = (n: number) => Array.from({ length: n }, (_, i) => option(`o${i}`));
const criterion = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  description: 'A criterion.',
  check: { kind: 'entity_present', key: 'service:api' },
  ...extra,
});

// [name, fields to replace, expected error path or null when the edge is accepted]
const BOUNDS: Array<[string, () => Record<string, unknown>, string | null]> = [
  ['title 3', () => ({ title: str(3) }), null],
  ['title 2', () => ({ title: str(2) }), '/title'],
  ['title 500', () => ({ title: str(500) }), null],
  ['title 501', () => ({ title: str(501) }), '/title'],
  ['question 3', () => ({ question: str(3) }), null],
  ['question 2', () => ({ question: str(2) }), '/question'],
  ['question 1000', () => ({ question: str(1000) }), null],
  ['question 1001', () => ({ question: str(1001) }), '/question'],
  ['context 3', () => ({ context: str(3) }), null],
  ['context 2', () => ({ context: str(2) }), '/context'],
  ['context 6000', () => ({ context: str(6000) }), null],
  ['context 6001', () => ({ context: str(6001) }), '/context'],
  ['options 2', () => ({ options: options(2) }), null],
  ['options 1', () => ({ options: options(1) }), '/options'],
  ['options 20', () => ({ options: options(20) }), null],
  ['options 21', () => ({ options: options(21) }), '/options'],
  ['option id 100', () => ({ options: [option(str(100)), option('b')] }), null],
  ['option id 101', () => ({ options: [option(str(101)), option('b')] }), '/options/0/id'],
  ['option id empty', () => ({ options: [option(''), option('b')] }), '/options/0/id'],
  ['option ids unique', () => ({ options: [option('a'), option('a')] }), '/options/1/id'],
  ['option title 500', () => ({ options: [option('a', { title: str(500) }), option('b')] }), null],
  [
    'option title 501',
    () => ({ options: [option('a', { title: str(501) }), option('b')] }),
    '/options/0/title',
  ],
  [
    'option description 4000',
    () => ({ options: [option('a', { description: str(4000) }), option('b')] }),
    null,
  ],
  [
    'option description 4001',
    () => ({ options: [option('a', { description: str(4001) }), option('b')] }),
    '/options/0/description',
  ],
  [
    'benefits 20',
    () => ({ options: [option('a', { benefits: Array(20).fill('b') }), option('b')] }),
    null,
  ],
  [
    'benefits 21',
    () => ({ options: [option('a', { benefits: Array(21).fill('b') }), option('b')] }),
    '/options/0/benefits',
  ],
  [
    'tradeoffs 20',
    () => ({ options: [option('a', { tradeoffs: Array(20).fill('t') }), option('b')] }),
    null,
  ],
  [
    'tradeoffs 21',
    () => ({ options: [option('a', { tradeoffs: Array(21).fill('t') }), option('b')] }),
    '/options/0/tradeoffs',
  ],
  ['evidence_ids 1', () => ({ evidence_ids: [w.evidenceIds[0]] }), null],
  ['evidence_ids 0', () => ({ evidence_ids: [] }), '/evidence_ids'],
  ['success_criteria 1', () => ({ success_criteria: [criterion('c0')] }), null],
  ['success_criteria 0', () => ({ success_criteria: [] }), '/success_criteria'],
  [
    'success_criteria 50',
    () => ({ success_criteria: Array.from({ length: 50 }, (_, i) => criterion(`c${i}`)) }),
    null,
  ],
  [
    'success_criteria 51',
    () => ({ success_criteria: Array.from({ length: 51 }, (_, i) => criterion(`c${i}`)) }),
    '/success_criteria',
  ],
  [
    'criterion ids unique',
    () => ({ success_criteria: [criterion('c'), criterion('c')] }),
    '/success_criteria/1/id',
  ],
  [
    'attribute_equals needs field and value',
    () => ({
      success_criteria: [
        criterion('c', { check: { kind: 'attribute_equals', key: 'service:api' } }),
      ],
    }),
    '/success_criteria/0/check/field',
  ],
  ['affected_entity_keys 500', () => ({ affected_entity_keys: Array(500).fill('k') }), null],
  [
    'affected_entity_keys 501',
    () => ({ affected_entity_keys: Array(501).fill('k') }),
    '/affected_entity_keys',
  ],
  [
    'affected_relationship_keys 1000',
    () => ({ affected_relationship_keys: Array(1000).fill('k') }),
    null,
  ],
  [
    'affected_relationship_keys 1001',
    () => ({ affected_relationship_keys: Array(1001).fill('k') }),
    '/affected_relationship_keys',
  ],
  ['candidate_change_id 255', () => ({ candidate_change_id: str(255) }), null],
  ['candidate_change_id 256', () => ({ candidate_change_id: str(256) }), '/candidate_change_id'],
  ['candidate_change_id null', () => ({ candidate_change_id: null }), null],
  ['criterion id 100', () => ({ success_criteria: [criterion(str(100))] }), null],
  [
    'criterion id 101',
    () => ({ success_criteria: [criterion(str(101))] }),
    '/success_criteria/0/id',
  ],
  [
    'criterion description 2000',
    () => ({ success_criteria: [criterion('c', { description: str(2000) })] }),
    null,
  ],
  [
    'criterion description 2001',
    () => ({ success_criteria: [criterion('c', { description: str(2001) })] }),
    '/success_criteria/0/description',
  ],
  [
    'check key 500',
    () => ({
      success_criteria: [criterion('c', { check: { kind: 'entity_present', key: str(500) } })],
    }),
    null,
  ],
  [
    'check key 501',
    () => ({
      success_criteria: [criterion('c', { check: { kind: 'entity_present', key: str(501) } })],
    }),
    '/success_criteria/0/check/key',
  ],
  [
    'check field 200',
    () => ({
      success_criteria: [
        criterion('c', {
          check: { kind: 'attribute_equals', key: 'k', field: str(200), value: 1 },
        }),
      ],
    }),
    null,
  ],
  [
    'check field 201',
    () => ({
      success_criteria: [
        criterion('c', {
          check: { kind: 'attribute_equals', key: 'k', field: str(201), value: 1 },
        }),
      ],
    }),
    '/success_criteria/0/check/field',
  ],
  [
    'check kind unknown',
    () => ({ success_criteria: [criterion('c', { check: { kind: 'entity_renamed', key: 'k' } })] }),
    '/success_criteria/0/check/kind',
  ],
  [
    'uncertainty subject_key 500',
    () => ({ uncertainties: [{ subject_key: str(500), description: 'd', blocking: true }] }),
    null,
  ],
  [
    'uncertainty subject_key 501',
    () => ({ uncertainties: [{ subject_key: str(501), description: 'd', blocking: true }] }),
    '/uncertainties/0/subject_key',
  ],
  [
    'uncertainty description 2000',
    () => ({ uncertainties: [{ subject_key: 'k', description: str(2000), blocking: false }] }),
    null,
  ],
  [
    'uncertainty description 2001',
    () => ({ uncertainties: [{ subject_key: 'k', description: str(2001), blocking: false }] }),
    '/uncertainties/0/description',
  ],
  ['unknown property', () => ({ status: 'approved' }), '/status'],
];

test.serial(
  'proposal bounds: each at its limit is accepted, one past it is a 400 naming the field',
  async (t) => {
    for (const [name, fields, errorPath] of BOUNDS) {
      const reply = await propose(w, fields());
      if (errorPath === null) {
        t.is(reply.status, 201, `${name}: ${reply.text}`);
      } else {
        t.is(reply.status, 400, `${name}: ${reply.text}`);
        t.true(isProblem(reply), name);
        t.true(
          paths(reply).some((p) => p === errorPath || p.startsWith(`${errorPath}/`)),
          `${name}: ${JSON.stringify(paths(reply))}`,
        );
      }
    }
  },
);

test.serial(
  'proposal references: snapshot, owner and evidence must exist in the workspace',
  async (t) => {
    const other = await createTenant(h.app.services.db);
    const missing = '00000000-0000-4000-8000-000000000000';
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ snapshot_id: missing }, '/snapshot_id', missing],
      [{ owner_id: other.memberId }, '/owner_id', other.memberId],
      [{ evidence_ids: [w.evidenceIds[0], missing] }, '/evidence_ids/1', missing],
      [
        { options: [option('a', { evidence_ids: [missing] }), option('b')] },
        '/options/0/evidence_ids/0',
        missing,
      ],
      [{ supersedes_id: missing }, '/supersedes_id', missing],
    ];
    for (const [fields, path, id] of cases) {
      const reply = await propose(w, fields);
      t.is(reply.status, 400, path);
      t.is(reply.body.code, 'validation_failed');
      const error = reply.body.errors.find((e: any) => e.path === path);
      t.truthy(error, `${path}: ${reply.text}`);
      t.true(error.message.includes(id), error.message);
    }
    // Another workspace's snapshot and evidence are as unknown as missing ones.
    const theirs = await call(h.app.url, 'POST', `/v1/workspaces/${other.workspaceId}/decisions`, {
      token: other.token,
      body: { ...proposal(w), owner_id: other.memberId },
    });
    t.is(theirs.status, 400);
    t.deepEqual(paths(theirs).sort(), [
      '/evidence_ids/0',
      '/options/0/evidence_ids/0',
      '/snapshot_id',
    ]);
  },
);

test.serial('transition bounds: rationale 3..4000, selected_option_id up to 100', async (t) => {
  const id = (await propose(w)).body.id;
  const send = (body: Record<string, unknown>) =>
    call(h.app.url, 'POST', `${w.ws}/decisions/${id}/transitions`, {
      token: w.proposer.token,
      body,
    });
  for (const [body, path] of [
    [{ status: 'in_review', rationale: 'ab' }, '/rationale'],
    [{ status: 'in_review', rationale: str(4001) }, '/rationale'],
    [
      { status: 'in_review', rationale: 'abc', selected_option_id: str(101) },
      '/selected_option_id',
    ],
    [{ status: 'nowhere', rationale: 'abc' }, '/status'],
  ] as const) {
    const r = await send(body);
    t.is(r.status, 400, JSON.stringify(body).slice(0, 80));
    t.true(paths(r).includes(path), r.text);
  }
  const edgeShort = await send({
    status: 'in_review',
    rationale: 'abc',
    selected_option_id: str(100),
  });
  t.is(edgeShort.status, 200, edgeShort.text);
  const edgeLong = await send({ status: 'proposed', rationale: str(4000) });
  t.is(edgeLong.status, 200, edgeLong.text);
  t.is(edgeLong.body.latest_rationale, str(4000));
  t.is(edgeLong.body.version, 3);
});

test.serial(
  'every illegal move from every state is a 409 naming the state and the allowed moves',
  async (t) => {
    const byState = new Map<DecisionStatus, string>();
    for (const state of ['proposed', 'in_review', 'approved', 'rejected'] as const)
      byState.set(state, await decisionIn(state));
    // Stays implemented through the audit below: its criterion is not met by the snapshot.
    const unmet = {
      success_criteria: [
        {
          id: 'ledger',
          description: 'A ledger service exists',
          check: { kind: 'entity_present', key: 'service:ledger' },
        },
      ],
    };
    byState.set('implemented', await decisionIn('implemented', unmet));
    // superseded: approve a decision that supersedes an approved one.
    const old = await decisionIn('approved');
    await decisionIn('approved', { supersedes_id: old });
    byState.set('superseded', old);
    // verified: implemented, then a snapshot completed afterwards meets the criteria.
    const verified = await decisionIn('implemented');
    await auditRepository(w);
    await waitForDecision(w, verified, (d) => d.status === 'verified');
    byState.set('verified', verified);

    let checked = 0;
    for (const from of DECISION_STATES) {
      const id = byState.get(from)!;
      t.is((await getDecision(w, id)).body.status, from);
      for (const to of DECISION_STATES) {
        if (REQUESTABLE_MOVES[from].includes(to)) continue;
        const reply = await move(w, id, to, w.bob.token, { selected_option_id: 'postgres' });
        t.is(reply.status, 409, `${from} -> ${to}: ${reply.text}`);
        t.true(isProblem(reply));
        t.is(reply.body.current_status, from);
        t.true(reply.body.detail.includes(from));
        checked++;
        if (to === 'approved' || to === 'rejected') {
          // approveDecision / rejectDecision answer with the approval model's codes.
          t.is(
            reply.body.code,
            from === 'proposed' ? 'not_awaiting_approval' : 'already_decided',
            `${from} -> ${to}`,
          );
          continue;
        }
        t.is(reply.body.code, 'invalid_transition', `${from} -> ${to}`);
        t.deepEqual(reply.body.allowed_statuses, [...REQUESTABLE_MOVES[from]]);
      }
      t.is((await getDecision(w, id)).body.status, from, `${from} unchanged`);
    }
    t.is(checked, 7 * 7 - 5, '49 pairs less the 5 requestable moves');
  },
);

test.serial(
  'approving: needs decisions:approve, a selected option, and not the proposer',
  async (t) => {
    const id = await decisionIn('in_review');
    const writer = await createToken(h.app.services.db, w.tenant, [
      'decisions:write',
      'decisions:read',
    ]);
    const noScope = await move(w, id, 'approved', writer.token, { selected_option_id: 'postgres' });
    t.is(noScope.status, 403);
    t.is(noScope.body.code, 'insufficient_scope');
    t.deepEqual(noScope.body.required_scopes, ['decisions:approve']);
    const noReject = await move(w, id, 'rejected', writer.token);
    t.is(noReject.status, 403);

    const self = await move(w, id, 'approved', w.proposer.token, {
      selected_option_id: 'postgres',
    });
    t.is(self.status, 403);
    t.is(self.body.code, 'self_approval');

    const noOption = await move(w, id, 'approved', w.bob.token);
    t.is(noOption.status, 400);
    t.deepEqual(paths(noOption), ['/selected_option_id']);
    const badOption = await move(w, id, 'approved', w.bob.token, { selected_option_id: 'mysql' });
    t.is(badOption.status, 400);
    t.true(badOption.body.errors[0].message.includes('postgres, dynamo'));

    const before = (await getDecision(w, id)).body;
    t.is(before.status, 'in_review');
    t.deepEqual(before.approvals, []);

    const ok = await move(w, id, 'approved', w.bob.token, {
      selected_option_id: 'dynamo',
      rationale: 'Managed service fits the team.',
    });
    t.is(ok.status, 200, ok.text);
    t.is(ok.body.status, 'approved');
    t.is(ok.body.selected_option_id, 'dynamo');
    t.is(ok.body.approved_by, w.bob.id);
    t.truthy(ok.body.approved_at);
    t.is(ok.body.latest_rationale, 'Managed service fits the team.');
    t.is(ok.body.version, before.version + 1);
    t.is(ok.body.approvals.length, 1);
    const a = ok.body.approvals[0];
    t.like(a, {
      actor_id: w.bob.id,
      actor_role: 'maintainer',
      authorization_scope: 'decisions:approve',
      policy_version: null,
      outcome: 'approved',
      rationale: 'Managed service fits the team.',
    });
    const events = await call(h.app.url, 'GET', `${w.ws}/audit-events`, {
      token: w.proposer.token,
    });
    t.true(
      events.body.items.some((e: any) => e.action === 'decision.approved' && e.resource_id === id),
    );
  },
);

test.serial(
  'a rejection is an approval record with outcome rejected and ends the decision',
  async (t) => {
    const id = await decisionIn('in_review');
    const r = await move(w, id, 'rejected', w.carol.token, { rationale: 'Too costly to run.' });
    t.is(r.status, 200, r.text);
    t.is(r.body.status, 'rejected');
    t.like(r.body.approvals[0], {
      actor_id: w.carol.id,
      actor_role: 'member',
      outcome: 'rejected',
    });
    const client = await h.app.services.temporal.client();
    t.is(await client.workflow.getHandle(`decision-${id}`).result(), 'rejected');
  },
);

test.serial(
  'quorum 2: the first approval is recorded and waits, the same member cannot count twice, a second member approves',
  async (t) => {
    const policy = await setPolicy(h.app.services.db, w.tenant.workspaceId, { quorum: 2 });
    try {
      const id = await decisionIn('in_review');
      const first = await move(w, id, 'approved', w.bob.token, { selected_option_id: 'postgres' });
      t.is(first.status, 200, first.text);
      t.is(first.body.status, 'in_review');
      t.is(first.body.approvals.length, 1);
      t.is(first.body.approvals[0].policy_version, policy.version);
      t.is(first.body.approved_by, null);

      const again = await move(w, id, 'approved', w.bob.token, { selected_option_id: 'postgres' });
      t.is(again.status, 409);
      t.is(again.body.code, 'duplicate_vote');

      const second = await move(w, id, 'approved', w.carol.token, {
        selected_option_id: 'postgres',
      });
      t.is(second.status, 200, second.text);
      t.is(second.body.status, 'approved');
      t.is(second.body.approved_by, w.carol.id);
      t.deepEqual(
        second.body.approvals.map((a: any) => [a.actor_id, a.outcome, a.policy_version]),
        [
          [w.bob.id, 'approved', policy.version],
          [w.carol.id, 'approved', policy.version],
        ],
      );
      t.is(second.body.version, first.body.version + 1);
    } finally {
      await setPolicy(h.app.services.db, w.tenant.workspaceId, { quorum: 1 });
    }
  },
);

test.serial(
  'If-Match: the current version moves, a stale one is 409 version_mismatch',
  async (t) => {
    const id = (await propose(w)).body.id;
    const got = await getDecision(w, id);
    t.is(got.headers.get('etag'), '"1"');
    const stale = await move(w, id, 'in_review', w.proposer.token, {}, { 'If-Match': '"7"' });
    t.is(stale.status, 409);
    t.is(stale.body.code, 'version_mismatch');
    t.is(stale.body.current_version, 1);
    const bad = await move(w, id, 'in_review', w.proposer.token, {}, { 'If-Match': 'abc' });
    t.is(bad.status, 400);
    const ok = await move(w, id, 'in_review', w.proposer.token, {}, { 'If-Match': '"1"' });
    t.is(ok.status, 200, ok.text);
    t.is(ok.body.version, 2);
    const again = await move(w, id, 'proposed', w.proposer.token, {}, { 'If-Match': '"1"' });
    t.is(again.status, 409);
    t.is(again.body.code, 'version_mismatch');
    t.is((await getDecision(w, id)).body.status, 'in_review');
  },
);

test.serial("another workspace's decision is a 404 for every operation", async (t) => {
  const id = (await propose(w)).body.id;
  const other = await createTenant(h.app.services.db);
  const base = `/v1/workspaces/${other.workspaceId}/decisions/${id}`;
  for (const [method, path, body] of [
    ['GET', base, undefined],
    ['GET', `${base}/brief`, undefined],
    ['POST', `${base}/transitions`, { status: 'in_review', rationale: 'abc' }],
  ] as const) {
    const r = await call(h.app.url, method, path, { token: other.token, body });
    t.is(r.status, 404, `${method} ${path}`);
    t.is(r.body.code, 'not_found');
  }
  const list = await call(h.app.url, 'GET', `/v1/workspaces/${other.workspaceId}/decisions`, {
    token: other.token,
  });
  t.deepEqual(list.body.items, []);
  t.is((await getDecision(w, id)).body.status, 'proposed');
});

test.serial(
  'listDecisions filters by status and repository and pages with a next link',
  async (t) => {
    const a = (await propose(w, { title: 'List A' })).body.id;
    const b = (await propose(w, { title: 'List B' })).body.id;
    await move(w, b, 'in_review', w.proposer.token);
    const inReview = await call(h.app.url, 'GET', `${w.ws}/decisions?status=in_review`, {
      token: w.proposer.token,
    });
    t.is(inReview.status, 200);
    t.true(inReview.body.items.every((d: any) => d.status === 'in_review'));
    t.true(inReview.body.items.some((d: any) => d.id === b));
    t.false(inReview.body.items.some((d: any) => d.id === a));

    const other = await call(
      h.app.url,
      'GET',
      `${w.ws}/decisions?repository_id=00000000-0000-4000-8000-000000000000`,
      { token: w.proposer.token },
    );
    t.deepEqual(other.body.items, []);

    const seen: string[] = [];
    let next: string | null = `${w.ws}/decisions?repository_id=${w.repositoryId}&limit=2`;
    while (next) {
      const page: Reply = await call(h.app.url, 'GET', next, { token: w.proposer.token });
      t.is(page.status, 200, page.text);
      t.true(page.body.items.length <= 2);
      seen.push(...page.body.items.map((d: any) => d.id));
      const link = page.headers.get('link');
      next = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1]! : null;
    }
    t.is(new Set(seen).size, seen.length, 'no decision twice');
    t.true(seen.indexOf(b) < seen.indexOf(a), 'newest first');
    const total = await h.app.services
      .db('decisions')
      .where({ workspace_id: w.tenant.workspaceId })
      .count<{ count: string }[]>('* as count');
    t.is(seen.length, Number(total[0]!.count));

    const bad = await call(h.app.url, 'GET', `${w.ws}/decisions?status=done`, {
      token: w.proposer.token,
    });
    t.is(bad.status, 400);
  },
);

test.serial(
  'supersession: approving a decision that supersedes another moves that one to superseded',
  async (t) => {
    const old = await decisionIn('implemented');
    const oldBefore = (await getDecision(w, old)).body;
    const created = await propose(w, {
      title: 'Move the ledger to its own database',
      supersedes_id: old,
    });
    t.is(created.status, 201, created.text);
    t.is(created.body.supersedes_id, old);
    const id = created.body.id;
    await move(w, id, 'in_review', w.proposer.token);
    t.is((await getDecision(w, old)).body.status, 'implemented', 'not before approval');
    const approved = await move(w, id, 'approved', w.bob.token, { selected_option_id: 'postgres' });
    t.is(approved.status, 200, approved.text);
    t.is(approved.body.status, 'approved');
    const after = (await getDecision(w, old)).body;
    t.is(after.status, 'superseded');
    t.truthy(after.superseded_at);
    t.is(after.superseded_at, approved.body.approved_at, 'in the same step');
    t.is(after.version, oldBefore.version + 1);
    const client = await h.app.services.temporal.client();
    t.is(await client.workflow.getHandle(`decision-${old}`).result(), 'superseded');
    const refused = await move(w, old, 'implemented', w.bob.token);
    t.is(refused.status, 409);
    t.is(refused.body.current_status, 'superseded');
    const events = await call(h.app.url, 'GET', `${w.ws}/audit-events`, {
      token: w.proposer.token,
    });
    t.true(
      events.body.items.some(
        (e: any) => e.action === 'decision.superseded' && e.resource_id === old,
      ),
    );
  },
);

test.serial('a decision can supersede only an approved, implemented or verified one', async (t) => {
  const target = await decisionIn('proposed');
  const id = await decisionIn('in_review', { supersedes_id: target });
  const r = await move(w, id, 'approved', w.bob.token, { selected_option_id: 'postgres' });
  t.is(r.status, 409);
  t.is(r.body.code, 'invalid_transition');
  const d = (await getDecision(w, id)).body;
  t.is(d.status, 'in_review');
  t.deepEqual(d.approvals, [], 'nothing half-recorded');
  t.is((await getDecision(w, target)).body.status, 'proposed');
});

test.serial('the brief is a Markdown ADR with every section', async (t) => {
  const id = await decisionIn('approved');
  const r = await call(h.app.url, 'GET', `${w.ws}/decisions/${id}/brief`, {
    token: w.proposer.token,
  });
  t.is(r.status, 200, r.text);
  t.is(r.body.decision_id, id);
  const d = (await getDecision(w, id)).body;
  const number = await h.app.services.db('decisions').where({ id }).first('number');
  t.is(r.body.filename, `${String(number.number).padStart(4, '0')}-use-postgres-for-the-ledger.md`);
  const md: string = r.body.markdown;
  for (const heading of [
    '## Context',
    '## Question',
    '## Options',
    '## Decision',
    '## Evidence',
    '## Success criteria',
    '## Verification',
    '## Approvals',
    '## Status history',
  ])
    t.true(md.includes(`\n${heading}\n`), heading);
  t.true(md.startsWith(`# ${String(number.number).padStart(4, '0')}. Use Postgres for the ledger`));
  t.true(md.includes(d.context));
  t.true(md.includes(d.question));
  t.true(md.includes('### PostgreSQL (`postgres`) — selected'));
  t.true(md.includes('- already deployed'));
  t.true(md.includes('- shared with orders'));
  t.true(md.includes('Selected option: **PostgreSQL**'));
  t.true(md.includes('Rationale: move to approved'));
  const ev = await h.app.services
    .db('architecture_evidence')
    .where({ id: w.evidenceIds[0] })
    .first();
  t.true(
    md.includes(`\`${ev.location.path}:${ev.location.start_line}`),
    'evidence cites its file and line',
  );
  t.true(md.includes('**pending** api-present'));
  t.true(md.includes('- approved by bob (role maintainer, scope `decisions:approve`'));
  t.true(md.includes('| — | proposed | alice |'));
  t.true(md.includes('| proposed | in_review | alice | move to in_review |'));
  t.true(md.includes('| in_review | approved | bob | move to approved |'));
});

test.serial(
  'operators set the approval policy with npm run admin -- set-decision-policy',
  async (t) => {
    const db = h.app.services.db;
    const ws = await db('workspaces').where({ id: w.tenant.workspaceId }).first('slug');
    const admin = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', ...args], {
        cwd: path.resolve(__dirname, '..'),
        env: { ...process.env, DATABASE_URL: h.app.database.url },
        encoding: 'utf8',
      });
    const before = await policyOf(db, w.tenant.workspaceId);
    const out = admin(
      'set-decision-policy',
      '--workspace',
      ws.slug,
      '--quorum',
      '3',
      '--reminder-hours',
      '0.5',
    );
    t.is(out.status, 0, out.stderr);
    t.true(out.stdout.includes('quorum=3'));
    t.true(out.stdout.includes('reminder_interval_hours=0.5'));
    const after = await policyOf(db, w.tenant.workspaceId);
    t.deepEqual(after, {
      quorum: 3,
      reminder_interval_seconds: 1800,
      version: (before.version ?? 0) + 1,
    });
    for (const bad of [
      ['--quorum', '0'],
      ['--quorum', '21'],
      ['--reminder-hours', '0'],
    ]) {
      const refused = admin('set-decision-policy', '--workspace', ws.slug, ...bad);
      t.is(refused.status, 2, bad.join(' '));
    }
    t.is(admin('set-decision-policy', '--workspace', 'no-such-workspace').status, 2);
    t.deepEqual(await policyOf(db, w.tenant.workspaceId), after, 'refused changes change nothing');
    await setPolicy(db, w.tenant.workspaceId, { quorum: 1 });
  },
);

test.serial(
  'the workflow validator refuses an illegal move on its own, before it enters history',
  async (t) => {
    const id = await decisionIn('proposed');
    const client = await h.app.services.temporal.client();
    const handle = client.workflow.getHandle(`decision-${id}`);
    const actor = {
      id: w.bob.id,
      login: 'bob',
      role: 'maintainer',
      scopes: ['decisions:approve'],
      tokenId: null,
      requestId: null,
    };
    const err = await t.throwsAsync(
      handle.executeUpdate(transitionUpdate, {
        args: [
          {
            to: 'approved',
            rationale: 'skip review',
            selectedOptionId: 'postgres',
            expectedVersion: null,
            actor,
          },
        ],
      }),
      { instanceOf: WorkflowUpdateFailedError },
    );
    const cause = err!.cause as ApplicationFailure;
    t.true(cause instanceof ApplicationFailure);
    // Approving a decision that is not in review: the approval model's refusal.
    t.is(cause.type, 'not_awaiting_approval');
    t.deepEqual(cause.details, [{ code: 'not_awaiting_approval', current: 'proposed' }]);
    const history = await handle.fetchHistory();
    t.false(
      (history.events ?? []).some((e) => e.workflowExecutionUpdateAcceptedEventAttributes),
      'a rejected Update leaves no accepted event',
    );
    t.is((await getDecision(w, id)).body.version, 1);
  },
);

test.serial(
  'two approvers at once with quorum 1: one approval lands, the other is refused',
  async (t) => {
    const id = await decisionIn('in_review');
    const replies = await Promise.all([
      move(w, id, 'approved', w.bob.token, { selected_option_id: 'postgres' }),
      move(w, id, 'approved', w.carol.token, { selected_option_id: 'dynamo' }),
    ]);
    const statuses = replies.map((r) => r.status).sort();
    t.deepEqual(statuses, [200, 409], replies.map((r) => r.text).join('\n'));
    const refused = replies.find((r) => r.status === 409)!;
    t.is(refused.body.code, 'already_decided');
    t.is(refused.body.current_status, 'approved');
    const d = (await getDecision(w, id)).body;
    t.is(d.status, 'approved');
    t.is(d.approvals.length, 1);
    t.is(d.version, 3);
  },
);
