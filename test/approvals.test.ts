/**
 * One suite of approval tests run against the four families that ask a second member to sign off
 * (decisions, remediations, workflow actions, audit reports), over real HTTP on the real stack
 * (API, Temporal worker, PostgreSQL, a git repository audited for real): the approve operation
 * declares the scope it checks (a token without it is 403), the author cannot approve (403
 * self_approval), another member can and the approval records their role, the scope and the
 * policy version, approving twice is 409 already_decided, the quorum (the workspace policy's for
 * decisions, one approval elsewhere), and the author may reject (withdraw) their own.
 */
import test from 'ava';
import { OPERATIONS } from '../api/operations';
import { policyOf, setPolicy } from '../db/decisions';
import { APPROVAL_POLICIES, type ApprovalFamily } from '../domain/approvals/model';
import { SCOPES } from '../domain/contract/values';
import { startAuditHarness, type AuditHarness } from './helpers/audit-harness';
import {
  addMember,
  auditRepository,
  decisionWorld,
  proposal,
  type DecisionWorld,
  type Member,
} from './helpers/decisions';
import { call, isProblem, type Reply } from './helpers/http';

let h: AuditHarness;
let w: DecisionWorld;
/** A maintainer whose token holds every scope but the approve scopes. */
let dave: Member;
let findingId: string;
/** The audit of the world, started by the proposer: its report is the first report subject. */
let firstAudit: string | null = null;

test.before(async () => {
  h = await startAuditHarness();
  w = await decisionWorld(h);
  dave = await addMember(
    h.app.services.db,
    w.tenant,
    'dave',
    'maintainer',
    SCOPES.filter((s) => !s.endsWith(':approve')),
  );
  const findings = await api('GET', '/findings?status=open', w.proposer.token);
  findingId = findings.body.items[0].id;
  const audits = await api('GET', '/audits', w.proposer.token);
  firstAudit = audits.body.items[0].id;
});
test.after.always(async () => {
  await h?.close();
  w?.repo.remove();
});

const api = (method: string, path: string, token: string, body?: unknown): Promise<Reply> =>
  call(h.app.url, method, `${w.ws}${path}`, { token, body });

/** One approval as the suite reads it, whichever family recorded it. */
interface Recorded {
  actor_id: string;
  actor_role: string;
  authorization_scope: string;
  policy_version: number | null;
  outcome: string;
}

interface Family {
  family: ApprovalFamily;
  approveOperation: string;
  rejectOperation: string | null;
  /** A new subject awaiting approval, authored by the proposer; its id. */
  create(): Promise<string>;
  approve(id: string, token: string): Promise<Reply>;
  reject(id: string, token: string): Promise<Reply>;
  read(id: string): Promise<any>;
  records(body: any): Recorded[];
  /** The subject's state once approved (a workflow action may have executed since). */
  approved(body: any): boolean;
  status(body: any): string;
}

async function created(reply: Promise<Reply>): Promise<string> {
  const r = await reply;
  if (r.status !== 201) throw new Error(r.text);
  return r.body.id;
}

const FAMILIES: Family[] = [
  {
    family: 'decision',
    approveOperation: 'approveDecision',
    rejectOperation: 'rejectDecision',
    async create() {
      const id = await created(api('POST', '/decisions', w.proposer.token, proposal(w)));
      const moved = await api('POST', `/decisions/${id}/transitions`, w.proposer.token, {
        status: 'in_review',
        rationale: 'ready for review',
      });
      if (moved.status !== 200) throw new Error(moved.text);
      return id;
    },
    approve: (id, token) =>
      api('POST', `/decisions/${id}/approval`, token, {
        rationale: 'fits the team',
        selected_option_id: 'postgres',
      }),
    reject: (id, token) =>
      api('POST', `/decisions/${id}/rejection`, token, { rationale: 'not now' }),
    read: async (id) => (await api('GET', `/decisions/${id}`, w.proposer.token)).body,
    records: (body) => body.approvals,
    approved: (body) => body.status === 'approved',
    status: (body) => body.status,
  },
  {
    family: 'remediation',
    approveOperation: 'approveRemediation',
    rejectOperation: 'rejectRemediation',
    create: () =>
      created(
        api('POST', '/remediations', w.proposer.token, {
          finding_ids: [findingId],
          plan: {
            summary: 'Fix it by hand.',
            steps: [{ title: 'Fix', detail: 'Change the file.' }],
            risk: 'low',
            effort: 'small',
          },
        }),
      ),
    approve: (id, token) =>
      api('POST', `/remediations/${id}/approval`, token, { rationale: 'fits the team' }),
    reject: (id, token) =>
      api('POST', `/remediations/${id}/rejection`, token, { rationale: 'not now' }),
    read: async (id) => (await api('GET', `/remediations/${id}`, w.proposer.token)).body,
    records: (body) => body.approvals,
    approved: (body) => body.status === 'approved',
    status: (body) => body.status,
  },
  {
    family: 'workflow_action',
    approveOperation: 'approveWorkflowAction',
    rejectOperation: 'rejectWorkflowAction',
    create: () =>
      created(
        api('POST', '/workflow-actions', w.proposer.token, {
          kind: 'change_gate_policy',
          target: { gate_policy: { enabled: true, confidence_floor: 0.4, rules: [] } },
          reason: 'Lower the confidence floor',
        }),
      ),
    approve: (id, token) =>
      api('POST', `/workflow-actions/${id}/approval`, token, { rationale: 'fits the team' }),
    reject: (id, token) =>
      api('POST', `/workflow-actions/${id}/rejection`, token, { rationale: 'not now' }),
    read: async (id) => (await api('GET', `/workflow-actions/${id}`, w.proposer.token)).body,
    records: (body) =>
      body.decided_by
        ? [
            {
              actor_id: body.decided_by,
              actor_role: body.decided_by_role,
              authorization_scope: body.decided_by_scope,
              policy_version: body.decided_policy_version,
              outcome: body.status === 'rejected' ? 'rejected' : 'approved',
            },
          ]
        : [],
    approved: (body) => ['approved', 'executed', 'failed'].includes(body.status),
    status: (body) => body.status,
  },
  {
    family: 'report',
    approveOperation: 'approveAuditReport',
    rejectOperation: null,
    async create() {
      // The world's audit first; then a new audit of the repository, started by the proposer.
      if (firstAudit) {
        const id = firstAudit;
        firstAudit = null;
        return id;
      }
      return (await auditRepository(w)).auditId;
    },
    approve: (id, token) =>
      api('POST', `/audits/${id}/report/approval`, token, { rationale: 'fits the team' }),
    reject: () => Promise.reject(new Error('a report is never rejected')),
    read: async (id) => (await api('GET', `/audits/${id}/report`, w.proposer.token)).body,
    records: (body) => (body.approval ? [{ ...body.approval, outcome: 'approved' }] : []),
    approved: (body) => body.status === 'approved',
    status: (body) => body.status,
  },
];

function refused(t: any, reply: Reply, status: number, code: string) {
  t.is(reply.status, status, reply.text);
  t.true(isProblem(reply), reply.text);
  t.is(reply.body.code, code, reply.text);
}

for (const f of FAMILIES) {
  const policy = APPROVAL_POLICIES[f.family];

  test.serial(
    `${f.family}: the declared scope is checked, the author cannot approve, another member can and it is recorded, approving twice is 409`,
    async (t) => {
      // The contract declares the scope the operation checks.
      for (const operationId of [f.approveOperation, f.rejectOperation]) {
        if (!operationId) continue;
        const op = OPERATIONS.find((o) => o.operationId === operationId);
        t.deepEqual(op?.access, { kind: 'scope', scope: policy.scope }, operationId);
      }
      const id = await f.create();
      const before = await f.read(id);

      const noScope = await f.approve(id, dave.token);
      refused(t, noScope, 403, 'insufficient_scope');
      t.deepEqual(noScope.body.required_scopes, [policy.scope]);

      const self = await f.approve(id, w.proposer.token);
      refused(t, self, 403, 'self_approval');
      t.deepEqual(f.records(await f.read(id)), []);
      t.is(f.status(await f.read(id)), f.status(before), 'nothing changed');

      const ok = await f.approve(id, w.bob.token);
      t.true([200, 201].includes(ok.status), ok.text);
      const after = await f.read(id);
      t.true(f.approved(after), JSON.stringify(after).slice(0, 300));
      const records = f.records(after);
      t.is(records.length, 1);
      t.like(records[0], {
        actor_id: w.bob.id,
        actor_role: 'maintainer',
        authorization_scope: policy.scope,
        policy_version:
          policy.quorum === 'workspace'
            ? (await policyOf(h.app.services.db, w.tenant.workspaceId)).version
            : null,
        outcome: 'approved',
      });

      for (const member of [w.bob, w.carol]) {
        const twice = await f.approve(id, member.token);
        refused(t, twice, 409, 'already_decided');
        t.truthy(twice.body.current_status);
      }
      t.is(f.records(await f.read(id)).length, 1, 'approving twice records nothing');
    },
  );

  test.serial(
    `${f.family}: the quorum is ${policy.quorum === 'workspace' ? "the workspace policy's, recorded with its version" : 'one other member, whatever the workspace policy'}`,
    async (t) => {
      const db = h.app.services.db;
      const set = await setPolicy(db, w.tenant.workspaceId, { quorum: 2 });
      try {
        const id = await f.create();
        const first = await f.approve(id, w.bob.token);
        t.true([200, 201].includes(first.status), first.text);
        const afterFirst = await f.read(id);
        if (policy.quorum === 'workspace') {
          t.false(f.approved(afterFirst), 'one approval of two waits');
          t.like(f.records(afterFirst)[0], { actor_id: w.bob.id, policy_version: set.version });
          refused(t, await f.approve(id, w.bob.token), 409, 'duplicate_vote');
          const second = await f.approve(id, w.carol.token);
          t.is(second.status, 200, second.text);
          const done = await f.read(id);
          t.true(f.approved(done));
          t.deepEqual(
            f.records(done).map((r) => [r.actor_id, r.actor_role, r.policy_version]),
            [
              [w.bob.id, 'maintainer', set.version],
              [w.carol.id, 'member', set.version],
            ],
          );
        } else {
          t.true(f.approved(afterFirst), 'one approval decides');
          t.is(f.records(afterFirst)[0]!.policy_version, null);
          refused(t, await f.approve(id, w.carol.token), 409, 'already_decided');
        }
      } finally {
        await setPolicy(db, w.tenant.workspaceId, { quorum: 1 });
      }
    },
  );

  if (f.rejectOperation)
    test.serial(
      `${f.family}: the author may reject (withdraw) it, recorded; then it is decided`,
      async (t) => {
        const id = await f.create();
        const noScope = await f.reject(id, dave.token);
        refused(t, noScope, 403, 'insufficient_scope');
        const withdrawn = await f.reject(id, w.proposer.token);
        t.is(withdrawn.status, 200, withdrawn.text);
        const body = await f.read(id);
        t.is(f.status(body), 'rejected');
        t.like(f.records(body)[0], {
          actor_id: w.proposer.id,
          authorization_scope: policy.scope,
          outcome: 'rejected',
        });
        refused(t, await f.approve(id, w.bob.token), 409, 'already_decided');
        refused(t, await f.reject(id, w.bob.token), 409, 'already_decided');
      },
    );
}
