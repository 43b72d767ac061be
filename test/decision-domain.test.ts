/** The decision state machine and success-criterion evaluation, as pure functions. */
import test from 'ava';
import {
  briefFilename,
  checkMove,
  evaluateCriterion,
  jsonEqual,
  verify,
  type CriterionInput,
  type SnapshotGraph,
} from '../domain/decisions/rules';

const graph: SnapshotGraph = {
  id: 'snap',
  entities: [
    {
      canonical_key: 'service:api',
      kind: 'service',
      name: 'api',
      attributes: { replicas: 2, ports: [8080], labels: { a: 1, b: 2 } },
      evidence_ids: ['e1', 'e2'],
    },
  ],
  relationships: [
    {
      canonical_key: 'connects_to:service:api->datastore:db',
      kind: 'connects_to',
      attributes: { protocol: 'postgres' },
      evidence_ids: ['e3'],
    },
  ],
};
const AT = '2026-11-22T00:00:00.000Z';
const c = (check: CriterionInput['check']): CriterionInput => ({
  id: 'c',
  description: 'd',
  check,
});
const status = (check: CriterionInput['check']) => evaluateCriterion(c(check), graph, AT).status;

test('each check kind, met and unmet, with the evidence of the item it looked at', (t) => {
  t.is(status({ kind: 'entity_present', key: 'service:api' }), 'met');
  t.is(status({ kind: 'entity_present', key: 'service:web' }), 'unmet');
  t.is(status({ kind: 'entity_absent', key: 'service:web' }), 'met');
  t.is(status({ kind: 'entity_absent', key: 'service:api' }), 'unmet');
  const rel = 'connects_to:service:api->datastore:db';
  t.is(status({ kind: 'relationship_present', key: rel }), 'met');
  t.is(status({ kind: 'relationship_present', key: 'calls:a->b' }), 'unmet');
  t.is(status({ kind: 'relationship_absent', key: 'calls:a->b' }), 'met');
  t.is(status({ kind: 'relationship_absent', key: rel }), 'unmet');
  t.deepEqual(
    evaluateCriterion(c({ kind: 'entity_present', key: 'service:api' }), graph, AT).evidence_ids,
    ['e1', 'e2'],
  );
  t.deepEqual(
    evaluateCriterion(c({ kind: 'entity_absent', key: 'service:web' }), graph, AT).evidence_ids,
    [],
  );
  t.deepEqual(
    evaluateCriterion(c({ kind: 'relationship_absent', key: rel }), graph, AT).evidence_ids,
    ['e3'],
  );
});

test('attribute_equals compares JSON values on attributes, kind and name', (t) => {
  const eq = (key: string, field: string, value: unknown) =>
    status({ kind: 'attribute_equals', key, field, value });
  t.is(eq('service:api', 'replicas', 2), 'met');
  t.is(eq('service:api', 'replicas', '2'), 'unmet', 'no type coercion');
  t.is(eq('service:api', 'ports', [8080]), 'met');
  t.is(eq('service:api', 'ports', [8080, 8081]), 'unmet');
  t.is(eq('service:api', 'labels', { b: 2, a: 1 }), 'met', 'key order does not matter');
  t.is(eq('service:api', 'labels', { a: 1 }), 'unmet');
  t.is(eq('service:api', 'kind', 'service'), 'met');
  t.is(eq('service:api', 'name', 'api'), 'met');
  t.is(eq('service:api', 'missing', null), 'unmet', 'an absent field is not null');
  t.is(eq('service:web', 'replicas', 2), 'unmet', 'absent entity');
  t.is(eq('connects_to:service:api->datastore:db', 'protocol', 'postgres'), 'met');
  t.is(status({ kind: 'attribute_equals', key: 'service:api' }), 'unknown', 'no field to compare');
  t.false(jsonEqual([1], { 0: 1 }));
  t.true(jsonEqual(null, null));
});

test('verify: all met -> verified, any unmet -> failed, otherwise inconclusive', (t) => {
  const at = new Date(AT);
  const met = c({ kind: 'entity_present', key: 'service:api' });
  const unmet = c({ kind: 'entity_present', key: 'service:web' });
  const unknown = c({ kind: 'attribute_equals', key: 'service:api' });
  t.is(verify([met, met], graph, at).outcome, 'verified');
  t.is(verify([met, unmet, unknown], graph, at).outcome, 'failed');
  t.is(verify([met, unknown], graph, at).outcome, 'inconclusive');
  const v = verify([met], graph, at);
  t.is(v.snapshot_id, 'snap');
  t.is(v.evaluated_at, AT);
  t.is(v.criteria[0]!.evaluated_at, AT);
});

test('checkMove: state machine, self-approval, options, one vote per member', (t) => {
  const facts = {
    status: 'in_review' as const,
    createdBy: 'alice',
    optionIds: ['a', 'b'],
    votedThisRound: ['carol'],
  };
  t.is(checkMove(facts, { to: 'approved', selectedOptionId: 'a', actorId: 'bob' }), null);
  t.deepEqual(checkMove(facts, { to: 'approved', selectedOptionId: 'a', actorId: 'alice' }), {
    code: 'self_approval',
  });
  t.is(checkMove(facts, { to: 'rejected', selectedOptionId: null, actorId: 'alice' }), null);
  t.like(checkMove(facts, { to: 'approved', selectedOptionId: 'z', actorId: 'bob' }), {
    code: 'unknown_option',
  });
  t.like(checkMove(facts, { to: 'approved', selectedOptionId: 'a', actorId: 'carol' }), {
    code: 'duplicate_vote',
  });
  t.deepEqual(checkMove(facts, { to: 'verified', selectedOptionId: null, actorId: 'bob' }), {
    code: 'invalid_transition',
    current: 'in_review',
    allowed: ['approved', 'rejected', 'proposed'],
  });
  t.like(
    checkMove(
      { ...facts, status: 'superseded' },
      { to: 'approved', selectedOptionId: 'a', actorId: 'bob' },
    ),
    { code: 'already_decided', current: 'superseded' },
  );
  t.like(
    checkMove(
      { ...facts, status: 'proposed' },
      { to: 'rejected', selectedOptionId: null, actorId: 'bob' },
    ),
    { code: 'not_awaiting_approval', current: 'proposed' },
  );
});

test('briefFilename: number and a slug of the title', (t) => {
  t.is(briefFilename(7, 'Use Postgres for ledger'), '0007-use-postgres-for-ledger.md');
  t.is(briefFilename(12, '  Café / Ünïcode: *yes*!  '), '0012-cafe-unicode-yes.md');
  t.is(briefFilename(3, '!!!'), '0003-decision.md');
  t.true(briefFilename(1, 'x'.repeat(300)).length <= 4 + 1 + 60 + 3);
});
