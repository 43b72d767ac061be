/**
 * What decision tests share: a workspace with a proposer (the owner) and two more members who
 * may approve, a real git repository audited once (so there is a snapshot with evidence), and a
 * valid proposal body built from that snapshot.
 */
import type { Knex } from 'knex';
import { insertMember } from '../../db/workspaces';
import { issueToken } from '../../platform/bootstrap';
import type { AuditHarness } from './audit-harness';
import { waitForAudit } from './audit-harness';
import { createTenant, type Tenant } from './factories';
import { createRepo, SAMPLE_FILES, type TestRepo } from './git';
import { call, type Reply } from './http';
import { SCOPES, type ScopeName } from '../../domain/contract/values';

export interface Member {
  id: string;
  login: string;
  token: string;
}

export interface DecisionWorld {
  h: AuditHarness;
  tenant: Tenant;
  proposer: Member;
  bob: Member;
  carol: Member;
  repo: TestRepo;
  repositoryId: string;
  snapshotId: string;
  evidenceIds: string[];
  /** `/v1/workspaces/<id>` */
  ws: string;
}

export async function addMember(
  db: Knex,
  tenant: Tenant,
  login: string,
  role: string,
  scopes: readonly ScopeName[] = SCOPES,
): Promise<Member> {
  const member = await insertMember(db, { workspaceId: tenant.workspaceId, login, role });
  const token = await issueToken(db, {
    workspaceId: tenant.workspaceId,
    memberId: member.id,
    name: login,
    scopes,
    days: 30,
  });
  return { id: member.id, login, token: token.token };
}

/** Runs an audit of the repository to completion; returns the audit and its snapshot id. */
export async function auditRepository(
  w: Pick<DecisionWorld, 'h' | 'tenant' | 'ws' | 'repositoryId'>,
  body: Record<string, unknown> = {},
): Promise<{ auditId: string; snapshotId: string }> {
  const started = await call(w.h.app.url, 'POST', `${w.ws}/audits`, {
    token: w.tenant.token,
    body: { repository_id: w.repositoryId, ...body },
  });
  if (started.status !== 202) throw new Error(started.text);
  const done = await waitForAudit(
    w.h.app.url,
    w.tenant.token,
    w.tenant.workspaceId,
    started.body.id,
    120_000,
  );
  if (done.body.status !== 'completed') throw new Error(JSON.stringify(done.body));
  const snaps = await call(
    w.h.app.url,
    'GET',
    `${w.ws}/repositories/${w.repositoryId}/architecture/snapshots`,
    { token: w.tenant.token },
  );
  const snap = snaps.body.items.find((s: { audit_id: string }) => s.audit_id === started.body.id);
  return { auditId: started.body.id, snapshotId: snap.id };
}

export async function decisionWorld(h: AuditHarness): Promise<DecisionWorld> {
  const db = h.app.services.db;
  const tenant = await createTenant(db, { login: 'alice' });
  const proposer = { id: tenant.memberId, login: 'alice', token: tenant.token };
  const bob = await addMember(db, tenant, 'bob', 'maintainer');
  const carol = await addMember(db, tenant, 'carol', 'member');
  const repo = createRepo(SAMPLE_FILES);
  const ws = `/v1/workspaces/${tenant.workspaceId}`;
  const created = await call(h.app.url, 'POST', `${ws}/repositories`, {
    token: tenant.token,
    body: { name: 'shop', url: `file://${repo.dir}` },
  });
  const repositoryId = created.body.id as string;
  const { auditId, snapshotId } = await auditRepository({ h, tenant, ws, repositoryId });
  const arch = await call(h.app.url, 'GET', `${ws}/audits/${auditId}/architecture`, {
    token: tenant.token,
  });
  const evidenceIds = (arch.body.evidence as Array<{ id: string }>).map((e) => e.id);
  return { h, tenant, proposer, bob, carol, repo, repositoryId, snapshotId, evidenceIds, ws };
}

/** A valid proposal based on the world's snapshot; `over` replaces fields. */
export function proposal(w: DecisionWorld, over: Record<string, unknown> = {}) {
  return {
    title: 'Use Postgres for the ledger',
    question: 'Which datastore holds the ledger?',
    context: 'The api service writes orders; the ledger needs transactions.',
    snapshot_id: w.snapshotId,
    owner_id: w.proposer.id,
    options: [
      {
        id: 'postgres',
        title: 'PostgreSQL',
        description: 'Keep the ledger in the existing db datastore.',
        benefits: ['already deployed'],
        tradeoffs: ['shared with orders'],
        evidence_ids: [w.evidenceIds[0]],
      },
      { id: 'dynamo', title: 'DynamoDB', description: 'A managed key-value store.' },
    ],
    evidence_ids: [w.evidenceIds[0]],
    uncertainties: [],
    success_criteria: [
      {
        id: 'api-present',
        description: 'The api service still exists',
        check: { kind: 'entity_present', key: 'service:api' },
      },
    ],
    ...over,
  };
}

export async function propose(
  w: DecisionWorld,
  over: Record<string, unknown> = {},
  token = w.proposer.token,
): Promise<Reply> {
  return call(w.h.app.url, 'POST', `${w.ws}/decisions`, { token, body: proposal(w, over) });
}

export async function move(
  w: DecisionWorld,
  id: string,
  status: string,
  token: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<Reply> {
  // Approving and rejecting are the approval operations (approveDecision, rejectDecision).
  const vote = { approved: 'approval', rejected: 'rejection' }[status];
  if (vote) {
    const { selected_option_id, ...rest } = extra;
    return call(w.h.app.url, 'POST', `${w.ws}/decisions/${id}/${vote}`, {
      token,
      headers,
      body: {
        rationale: `move to ${status}`,
        ...(status === 'approved' && selected_option_id != null ? { selected_option_id } : {}),
        ...rest,
      },
    });
  }
  return call(w.h.app.url, 'POST', `${w.ws}/decisions/${id}/transitions`, {
    token,
    headers,
    body: { status, rationale: `move to ${status}`, ...extra },
  });
}

export async function getDecision(w: DecisionWorld, id: string): Promise<Reply> {
  return call(w.h.app.url, 'GET', `${w.ws}/decisions/${id}`, { token: w.proposer.token });
}

/** Polls getDecision until `done` holds for it (or the timeout passes). */
export async function waitForDecision(
  w: DecisionWorld,
  id: string,
  done: (d: any) => boolean,
  timeoutMs = 60_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reply = await getDecision(w, id);
    if (reply.status === 200 && done(reply.body)) return reply.body;
    if (Date.now() > deadline)
      throw new Error(`decision ${id} did not reach the condition: ${reply.text}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
