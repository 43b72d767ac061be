/** Architecture changes between snapshots, the workspace gate policy, and each audit's gate. */
import { Type } from '@sinclair/typebox';
import {
  auditGateOf,
  changeStore,
  gatePolicyOf,
  previousSnapshotIdOnBranch,
  replaceGatePolicy,
  snapshotPlace,
  snapshotWithAudit,
  type StoredGatePolicy,
} from '../../db/changes';
import { latestSnapshotId } from '../../db/architecture';
import type { Knex } from 'knex';
import {
  DEFAULT_GATE_POLICY,
  isDefaultGatePolicy,
  policyProblems,
  type GatePolicy,
} from '../../domain/changes/gate';
import { evaluateChanges, presentChangeItem, presentGate } from '../../domain/changes/service';
import { AuditParams } from '../audits/schemas';
import { problems } from '../errors';
import { defineOperation, type Principal, ok, operationGroup, route } from '../registry/operation';
import { RepositoryParams } from '../repositories/schemas';
import { WorkspaceParams } from '../schema-kit';
import { iso, isoOrNull, recordPrincipalWrite } from '../shared';
import type { StoredGate } from '../../domain/changes/service';
import { GATE_CONTENT_TYPES, GATE_FORMATS, renderGate } from './render';
import {
  ArchitectureChangeResponse,
  AuditGateResponse,
  GatePolicyReset,
  GatePolicyResponse,
  GatePolicyUpdate,
} from './schemas';
import { found, versionMismatch, formatQuery } from '../registry/parts';
import { loadAudit, loadRepository } from '../registry/loads';

const ARCHITECTURE = operationGroup('Architecture');
const AUDITS = operationGroup('Audits');
const POLICIES = operationGroup('Policies');

export const getArchitectureChanges = defineOperation({
  operationId: 'getArchitectureChanges',
  ...route.get('/v1/workspaces/{workspace_id}/repositories/{repository_id}/architecture/changes'),
  summary: 'Changes between two architecture snapshots of a repository, with the change gate',
  description:
    "Without parameters: the repository's latest architecture (its default branch's latest full audit: a completed audit of the default branch whose source scope narrows nothing; a feature-branch or scoped audit only while there is none) against the snapshot its audit's change gate was computed against. `to_snapshot_id` alone compares that snapshot with the same baseline as its audit's gate: for an audit of another branch or a pull request, its base branch's snapshot at the merge-base; otherwise (and when the audit has no gate) the completed one before it on its branch; `from_snapshot_id` and `to_snapshot_id` compare any two snapshots of the repository. An entity or relationship that is gone while the current snapshot did not read the source type that saw it is `*_not_reobserved`, not removed. The gate applies the workspace's current gate policy. Snapshots of another repository are 422 snapshot_repository_mismatch.",
  ...ARCHITECTURE.scope('audits:read'),
  params: RepositoryParams,
  query: Type.Object(
    {
      from_snapshot_id: Type.Optional(
        Type.String({ format: 'uuid', description: 'The earlier snapshot.' }),
      ),
      to_snapshot_id: Type.Optional(
        Type.String({ format: 'uuid', description: 'The later snapshot.' }),
      ),
    },
    { additionalProperties: false },
  ),
  errors: [422],
  success: ok('The changes and the gate.', ArchitectureChangeResponse),
  handler: async ({ db, params, query }) => {
    const repo = await loadRepository(db, params.workspace_id, params.repository_id);
    // Where the two snapshots are is settled first (small queries); their graphs, the bulk of
    // the time, are then read side by side.
    const place = async (id: string, role: string) => {
      const hit = await found(snapshotPlace(db, params.workspace_id, id), `Snapshot ${id}`);
      if (hit.repository_id !== repo.id)
        throw problems.unprocessable(
          'snapshot_repository_mismatch',
          `The ${role} snapshot ${id} belongs to another repository than ${repo.id}.`,
          'Compare two snapshots of the same repository (listArchitectureSnapshots lists them).',
        );
      return hit;
    };
    if (query.from_snapshot_id && !query.to_snapshot_id)
      throw problems.validationFailed([
        { in: 'query', path: '/to_snapshot_id', message: 'is required with from_snapshot_id' },
      ]);
    let toId = query.to_snapshot_id;
    if (!toId) {
      toId = await latestSnapshotId(db, params.workspace_id, repo.id);
      if (!toId) throw problems.notFound(`A completed audit of repository ${repo.id}`);
    }
    const to = await place(toId, 'to');
    const current = await snapshotWithAudit(db, params.workspace_id, to.id);
    if (!current) throw problems.notFound(`Snapshot ${to.id}`);
    // The default baseline is the one the audit's own gate used (for a branch or a pull request,
    // its base branch at the merge-base), else the snapshot before it on its branch.
    const fromId = query.from_snapshot_id
      ? (await place(query.from_snapshot_id, 'from')).id
      : ((await auditGateOf(db, current.audit_id))?.previous_snapshot_id ??
        (await previousSnapshotIdOnBranch(db, to, to.branch_ref)));
    const previous = fromId ? await snapshotWithAudit(db, params.workspace_id, fromId) : undefined;
    const { gate, coverage_comparable } = await evaluateChanges(
      changeStore(db),
      current,
      previous ?? null,
      [current.branch_ref].filter((r): r is string => r !== null),
    );
    // Owner hints come from the CODEOWNERS the audit read; the audit's own gate holds them.
    const stored = await auditGateOf(db, current.audit_id);
    const owners = new Map<string, string | null>();
    if (stored && stored.previous_snapshot_id === (previous?.id ?? null))
      for (const c of (stored.result as unknown as StoredGate).response.changes)
        owners.set(c.key, c.owner_hint ?? null);
    return {
      repository_id: repo.id,
      coverage_comparable,
      current_source_coverage: current.source_coverage,
      current_sources: current.sources,
      previous_sources: previous?.sources ?? [],
      changes: gate.items.map((i) => presentChangeItem(i, owners.get(i.key) ?? null)),
      gate: presentGate(gate),
      current_audit_id: current.audit_id,
      current_snapshot_id: current.id,
      previous_audit_id: previous?.audit_id ?? null,
      previous_snapshot_id: previous?.id ?? null,
      current_generated_at: iso(current.generated_at),
      previous_generated_at: previous ? iso(previous.generated_at) : null,
    };
  },
});

function presentPolicy(workspaceId: string, stored: StoredGatePolicy) {
  const ids = new Set(stored.policy.rules.map((r) => r.id));
  return {
    workspace_id: workspaceId,
    enabled: stored.policy.enabled,
    confidence_floor: stored.policy.confidence_floor,
    rules: stored.policy.rules,
    version: stored.version,
    is_default: stored.version === 0 || isDefaultGatePolicy(stored.policy),
    missing_default_rules: DEFAULT_GATE_POLICY.rules.map((r) => r.id).filter((id) => !ids.has(id)),
    updated_by: stored.updated_by,
    updated_at: isoOrNull(stored.updated_at),
  };
}

/** Replaces the policy at `expectedVersion` (409 version_mismatch otherwise), with an audit event. */
async function storePolicy(
  db: Knex,
  workspaceId: string,
  expectedVersion: number,
  principal: Principal,
  requestId: string,
  policy: GatePolicy,
  action = 'gate_policy.updated',
): Promise<StoredGatePolicy> {
  const wrong = policyProblems(policy);
  if (wrong.length > 0)
    throw problems.validationFailed(
      wrong.map((w) => ({ in: 'body', path: w.pointer, message: w.message })),
    );
  const stored = await db.transaction(async (trx) => {
    const before = await gatePolicyOf(trx, workspaceId);
    const after = await replaceGatePolicy(
      trx,
      workspaceId,
      expectedVersion,
      policy,
      principal.memberId,
    );
    if (!after) {
      const current = await gatePolicyOf(trx, workspaceId);
      throw versionMismatch('gate policy', current.version, expectedVersion, 'getGatePolicy');
    }
    await recordPrincipalWrite(trx, principal, requestId, {
      action,
      resourceType: 'gate_policy',
      resourceId: workspaceId,
      details: {
        before: { version: before.version, ...before.policy },
        after: { version: after.version, ...after.policy },
      },
    });
    return after;
  });
  return stored;
}

export const getGatePolicy = defineOperation({
  operationId: 'getGatePolicy',
  ...route.get('/v1/workspaces/{workspace_id}/policies/gate'),
  summary: "The workspace's change gate policy",
  description:
    'A workspace that never set one runs on the built-in default (version 0, `is_default` true): a new external call or a new service -> review; a datastore, queue or bucket removed, a new client of a shared datastore, a new service cycle, or a newly failing high-severity control -> blocked; confidence floor 0.5.',
  ...POLICIES.scope('policies:read'),
  params: WorkspaceParams,
  success: ok('The policy.', GatePolicyResponse),
  handler: async ({ db, params }) =>
    presentPolicy(params.workspace_id, await gatePolicyOf(db, params.workspace_id)),
});

export const updateGatePolicy = defineOperation({
  operationId: 'updateGatePolicy',
  ...route.put('/v1/workspaces/{workspace_id}/policies/gate'),
  summary: "Replace the workspace's change gate policy",
  description:
    '`expected_version` must be the current version (0 while on the default): otherwise 409 version_mismatch with current_version, and nothing changes. Each replacement increments `version`; every later gate records the version it applied. Recorded as an audit event with the policy before and after.',
  ...POLICIES.scope('policies:write'),
  params: WorkspaceParams,
  body: GatePolicyUpdate,
  errors: [409],
  success: ok('The new policy.', GatePolicyResponse),
  handler: async ({ db, params, body, principal, requestId }) =>
    presentPolicy(
      params.workspace_id,
      await storePolicy(db, params.workspace_id, body.expected_version, principal, requestId, {
        enabled: body.enabled,
        confidence_floor: body.confidence_floor,
        rules: body.rules,
      }),
    ),
});

export const resetGatePolicy = defineOperation({
  operationId: 'resetGatePolicy',
  ...route.post('/v1/workspaces/{workspace_id}/policies/gate/reset'),
  summary: 'Put the built-in default gate policy back in effect',
  description:
    'Stores the built-in default policy (every default rule, floor 0.5, enabled) as the next version, so later gates record which version they applied. `expected_version` must be the current version: otherwise 409 version_mismatch with current_version, and nothing changes. Recorded as an audit event with the policy before and after.',
  ...POLICIES.scope('policies:write'),
  params: WorkspaceParams,
  body: GatePolicyReset,
  errors: [409],
  success: ok('The default policy, in effect.', GatePolicyResponse),
  handler: async ({ db, params, body, principal, requestId }) =>
    presentPolicy(
      params.workspace_id,
      await storePolicy(
        db,
        params.workspace_id,
        body.expected_version,
        principal,
        requestId,
        DEFAULT_GATE_POLICY,
        'gate_policy.reset',
      ),
    ),
});

export const getAuditGate = defineOperation({
  operationId: 'getAuditGate',
  ...route.get('/v1/workspaces/{workspace_id}/audits/{audit_id}/gate'),
  summary: "An audit's change gate, as JSON or as a CI artifact",
  description:
    "The gate the audit's `changes` stage computed against the previous completed snapshot of the same repository and branch, with the policy version it applied. `format=json` (default) answers AuditGateResponse; `sarif` a SARIF 2.1.0 log (application/sarif+json) with one result per reviewed or blocked change; `junit` JUnit XML with one test case per rule; `markdown` a summary for a pull-request comment. 404 until the audit has passed its changes stage.",
  ...AUDITS.scope('audits:read'),
  params: AuditParams,
  query: formatQuery(GATE_FORMATS, 'json, sarif, junit or markdown.'),
  success: {
    status: 200,
    description: 'The gate.',
    schema: AuditGateResponse,
    alternates: {
      [GATE_CONTENT_TYPES.sarif]: Type.Object(
        { version: Type.Literal('2.1.0'), runs: Type.Array(Type.Unknown()) },
        { description: 'A SARIF 2.1.0 log.' },
      ),
      [GATE_CONTENT_TYPES.junit]: Type.String({ description: 'JUnit XML.' }),
      [GATE_CONTENT_TYPES.markdown]: Type.String({ description: 'Markdown.' }),
    },
  },
  handler: async ({ db, params, query, koa }) => {
    const audit = await loadAudit(db, params.workspace_id, params.audit_id);
    const row = await found(auditGateOf(db, audit.id), `The change gate of audit ${audit.id}`);
    const stored = row.result as unknown as StoredGate;
    const format = query.format ?? 'json';
    if (format === 'json') return stored.response;
    koa.type = GATE_CONTENT_TYPES[format];
    return renderGate(format, stored, { auditId: audit.id, commitSha: audit.commit_sha }) as never;
  },
});
