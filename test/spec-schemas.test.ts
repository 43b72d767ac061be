import test from 'ava';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { Type, type TSchema } from '@sinclair/typebox';
import { Decimal } from '../api/schema-kit';
import { ApiTokenCreate } from '../api/tokens/schemas';
import { ArchitectureDecisionProposal } from '../api/decisions/schemas';
import { AttachmentCreate } from '../api/attachments/schemas';
import { AuditCreate } from '../api/audits/schemas';
import { AuditScheduleCreate } from '../api/schedules/schemas';
import { SCOPES } from '../domain/contract/values';
import { CONTRACT_SCHEMAS, schemaName } from '../api/schemas';

const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats(ajv);
ajv.addKeyword('x-name');

const validator = (schema: TSchema) => {
  const validate = ajv.compile(schema);
  return (value: unknown) => validate(value) === true;
};

const SPEC_NAMES = [
  // 2.1
  'AcceptedResponse',
  'ActivityFeedItem',
  'AuditEventResponse',
  // 2.2
  'AgentArtifactResponse',
  'AgentRunResponse',
  'AgentTimelineResponse',
  // 2.3
  'ApiTokenCreate',
  'ApiTokenCreated',
  'ApiTokenResponse',
  // 2.4
  'ArchitectureBundleResponse',
  'ArchitectureTruthResponse',
  'ArchitectureEntityResponse',
  'ArchitectureRelationshipResponse',
  'ArchitectureGraphLinks',
  'ArchitectureEvidenceResponse',
  'ArchitectureDependencyPath',
  'ArchitectureDependencyResponse',
  'ArchitectureSnapshotHistoryItem',
  'ArchitectureSnapshotHistoryResponse',
  // 2.5
  'ArchitectureChangeGate',
  'ArchitectureChangeItem',
  'ArchitectureChangeResponse',
  'ArchitectureChangeSetResponse',
  'ArchitectureChangeSetPage',
  'ArchitectureChangeSetReconcile',
  'ArchitectureDelta',
  // 2.6
  'ArchitectureDecisionOption',
  'ArchitectureDecisionProposal',
  'ArchitectureDecisionResponse',
  'ArchitectureDecisionApprovalResponse',
  'ArchitectureDecisionTransition',
  'ArchitectureDecisionBriefResponse',
  'ArchitectureDecisionPage',
  // 2.7
  'ArchitectureUncertaintyCaseResponse',
  'ArchitectureUncertaintyCaseUpdate',
  'ArchitectureUncertaintyCasePage',
  // 2.8
  'AssessmentResponse',
  // 2.9
  'AssistantMessageResponse',
  'AssistantRunResponse',
  'AssistantRunUsage',
  'AssistantConversationUsage',
  'AssistantUsageDay',
  'AssistantUsageResponse',
  // 2.10
  'AttachmentCreate',
  'AttachmentResponse',
  // 2.11
  'AuditCreate',
  'AuditResponse',
  'AuditPage',
  'AuditLogItem',
  'AuditLogResponse',
  'AuditCostResponse',
  // 2.12
  'AuditComparisonCreate',
  'AuditComparisonListItem',
  'AuditComparisonPage',
  'AuditComparisonResponse',
  'AuditComparisonResult',
  // 2.13
  'AuditProfileFields',
  'AuditProfileUpdate',
  'AuditProfileResponse',
  'AuditProfilePage',
  // 2.14
  'AuditScheduleCreate',
  'AuditSchedulePreviewRequest',
  'AuditSchedulePreviewResponse',
  'AuditSchedulePage',
  'AuditScheduleResponse',
  // the types the specification leaves open, and the decision states
  'AuditSourceScope',
  'AuditSourceResponse',
  'AuditStageResponse',
  'AuditType',
  'AuditStatus',
  'ComparisonAuditSide',
  'FindingDelta',
  'ConflictingClaim',
  'ClaimAlternative',
  'ChangeSetAccuracy',
  'NormalizedArchitectureChange',
  'RequirementResponse',
  'DecisionSuccessCriterionInput',
  'DecisionSuccessCriterion',
  'DecisionOutcomeVerification',
  'UncertaintySignal',
  'UncertaintyReason',
  'UncertaintyScope',
  'UncertaintyState',
  'ArchitectureDecisionState',
];

const str = (n: number) => 'x'.repeat(n);
const UUID = '0b6f3c1e-2d4a-4f5b-9c8d-7e6f5a4b3c2d';

test('every spec schema name is a named schema in CONTRACT_SCHEMAS', (t) => {
  const names = CONTRACT_SCHEMAS.map(schemaName);
  for (const name of SPEC_NAMES) t.true(names.includes(name), `missing ${name}`);
  t.is(new Set(names).size, names.length, 'schema names are unique');
});

test('every named schema compiles under Ajv 2020 strict mode', (t) => {
  for (const schema of CONTRACT_SCHEMAS) {
    t.notThrows(() => ajv.compile(schema), schemaName(schema));
  }
});

test('ApiTokenCreate: name, scopes and expires_at', (t) => {
  const valid = validator(ApiTokenCreate);
  const base = { name: 'ci', scopes: ['audits:read'], expires_at: '2030-01-01T00:00:00.000Z' };
  t.true(valid(base));
  t.true(valid({ ...base, name: str(1) }));
  t.true(valid({ ...base, name: str(255) }));
  t.false(valid({ ...base, name: '' }));
  t.false(valid({ ...base, name: str(256) }));
  t.is(SCOPES.length, 25);
  t.true(valid({ ...base, scopes: [...SCOPES] }));
  t.false(valid({ ...base, scopes: [] }));
  t.false(valid({ ...base, scopes: [...SCOPES, 'audits:read'] }));
  t.false(valid({ ...base, scopes: ['audits:delete'] }));
  t.false(valid({ name: base.name, scopes: base.scopes }), 'expires_at is required');
  t.false(valid({ ...base, expires_at: 'tomorrow' }));
  t.false(valid({ ...base, extra: true }), 'unknown property rejected');
});

test('ArchitectureDecisionProposal: title and options bounds', (t) => {
  const valid = validator(ArchitectureDecisionProposal);
  const option = (id: string) => ({ id, title: 'Option', description: 'An option.' });
  const options = (n: number) => Array.from({ length: n }, (_, i) => option(`o${i}`));
  const base = {
    title: 'Use Redis',
    question: 'Which cache?',
    context: 'We need a cache.',
    snapshot_id: UUID,
    owner_id: UUID,
    options: options(2),
    evidence_ids: [UUID],
    uncertainties: [],
    success_criteria: [
      {
        id: 'c1',
        description: 'Redis is present',
        check: { kind: 'entity_present', key: 'datastore:redis' },
      },
    ],
  };
  t.true(valid(base));
  t.true(valid({ ...base, title: str(3) }));
  t.true(valid({ ...base, title: str(500) }));
  t.false(valid({ ...base, title: str(2) }));
  t.false(valid({ ...base, title: str(501) }));
  t.true(valid({ ...base, options: options(20) }));
  t.false(valid({ ...base, options: options(1) }));
  t.false(valid({ ...base, options: options(21) }));
  t.false(valid({ ...base, evidence_ids: [] }));
  t.false(valid({ ...base, success_criteria: [] }));
});

test('AuditCreate: commit_sha and branch_ref', (t) => {
  const valid = validator(AuditCreate);
  t.true(valid({}));
  t.true(valid({ commit_sha: 'a'.repeat(40) }));
  t.true(valid({ commit_sha: '0123456789abcdefABCDEF0123456789abcdef01' }));
  t.true(valid({ commit_sha: null }));
  t.false(valid({ commit_sha: 'a'.repeat(39) }));
  t.false(valid({ commit_sha: 'a'.repeat(41) }));
  t.false(valid({ commit_sha: 'g'.repeat(40) }));
  t.true(valid({ branch_ref: str(1) }));
  t.true(valid({ branch_ref: str(500) }));
  t.true(valid({ branch_ref: null }));
  t.false(valid({ branch_ref: '' }));
  t.false(valid({ branch_ref: str(501) }));
  t.false(valid({ profile_version: 0 }));
  t.false(valid({ source_scope: { source_types: ['code', 'code'] } }));
});

test('AuditScheduleCreate: hour, weekday and day_of_month edges', (t) => {
  const valid = validator(AuditScheduleCreate);
  const base = {
    name: 'nightly',
    repository_id: UUID,
    timezone: 'Europe/Paris',
    cadence: 'daily',
    local_hour: 2,
    local_minute: 30,
  };
  t.true(valid(base));
  t.true(valid({ ...base, local_hour: 0 }));
  t.true(valid({ ...base, local_hour: 23 }));
  t.false(valid({ ...base, local_hour: -1 }));
  t.false(valid({ ...base, local_hour: 24 }));
  t.true(valid({ ...base, weekday: 0 }));
  t.true(valid({ ...base, weekday: 6 }));
  t.true(valid({ ...base, weekday: null }));
  t.false(valid({ ...base, weekday: -1 }));
  t.false(valid({ ...base, weekday: 7 }));
  t.true(valid({ ...base, day_of_month: 1 }));
  t.true(valid({ ...base, day_of_month: 31 }));
  t.false(valid({ ...base, day_of_month: 0 }));
  t.false(valid({ ...base, day_of_month: 32 }));
  t.false(valid({ ...base, cadence: 'hourly' }));
  t.false(valid({ ...base, missed_run_policy: 'always' }));
});

test('AttachmentCreate: retention_days edges and unknown properties', (t) => {
  const valid = validator(AttachmentCreate);
  t.true(valid({ upload_id: UUID }));
  t.true(valid({ upload_id: UUID, retention_days: 1 }));
  t.true(valid({ upload_id: UUID, retention_days: 365 }));
  t.false(valid({ upload_id: UUID, retention_days: 0 }));
  t.false(valid({ upload_id: UUID, retention_days: 366 }));
  t.false(valid({ retention_days: 30 }));
  t.true(valid({ upload_id: UUID, note: 'kept' }), 'AttachmentCreate accepts unknown properties');
  const token = validator(ApiTokenCreate);
  t.false(
    token({ name: 'x', scopes: ['audits:read'], expires_at: '2030-01-01T00:00:00Z', note: 1 }),
    'ApiTokenCreate rejects unknown properties',
  );
});

test('Decimal accepts decimal strings and rejects signs, points and exponents', (t) => {
  const valid = validator(Type.Object({ d: Decimal() }));
  for (const ok of ['0', '-1.5', '.5', '3.', '+2', '0.8125']) t.true(valid({ d: ok }), ok);
  for (const bad of ['', '+', '.', '+-', '1e5', '-.', '1.2.3']) t.false(valid({ d: bad }), bad);
  t.false(valid({ d: 1.5 }), 'numbers are not decimals');
});
