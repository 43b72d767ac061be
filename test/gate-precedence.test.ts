/**
 * The gate's precedence, as pure functions over two snapshots: a blocked change resting on
 * evidence at or above the floor blocks whatever else is unsure; doubt (a change below the floor,
 * no comparable baseline, an open blocking case) wins over review and pass only.
 */
import test from 'ava';
import type { GraphItem, SnapshotSide } from '../domain/changes/diff';
import { coverageComparable, diffSnapshots } from '../domain/changes/diff';
import { DEFAULT_GATE_POLICY, evaluateGate, type GateUncertainty } from '../domain/changes/gate';

const entity = (key: string, kind: string, confidence = '0.90'): GraphItem => ({
  canonical_key: key,
  kind,
  name: key.split(':').slice(1).join(':'),
  attributes: {},
  confidence,
  evidence_ids: [`ev-${key}`],
  sources: ['code'],
});
const edge = (from: string, to: string, confidence = '0.90'): GraphItem => ({
  canonical_key: `connects_to:${from}->${to}`,
  kind: 'connects_to',
  source_key: from,
  target_key: to,
  attributes: {},
  confidence,
  evidence_ids: [`ev-${from}->${to}`],
  sources: ['code'],
});

const BASE: SnapshotSide = {
  entities: [
    entity('service:orders', 'service'),
    entity('service:billing', 'service'),
    entity('service:reports', 'service'),
    entity('datastore:orders-db', 'datastore'),
  ],
  relationships: [edge('service:billing', 'datastore:orders-db')],
  sources: ['code'],
};

/** The head: reports newly uses billing's datastore (blocked), orders newly calls an external API (review). */
function head(opts: {
  shared?: string | null;
  external?: string | null;
  sources?: string[];
}): SnapshotSide {
  const entities = [...BASE.entities];
  const relationships = [...BASE.relationships];
  if (opts.shared) relationships.push(edge('service:reports', 'datastore:orders-db', opts.shared));
  if (opts.external) {
    entities.push(entity('external:api.pay.example', 'external'));
    relationships.push(edge('service:orders', 'external:api.pay.example', opts.external));
  }
  return { entities, relationships, sources: opts.sources ?? ['code'] };
}

function gate(
  current: SnapshotSide,
  previous: SnapshotSide | null = BASE,
  uncertainties: GateUncertainty[] = [],
) {
  return evaluateGate({
    policy: DEFAULT_GATE_POLICY,
    policyVersion: 0,
    previous: previous && { ...previous, snapshot_id: 'base' },
    current: { ...current, snapshot_id: 'head' },
    changes: previous ? diffSnapshots(previous, current) : [],
    coverageComparable: previous ? coverageComparable(previous, current) : false,
    previousAssessments: [],
    currentAssessments: [],
    decisions: [],
    uncertainties,
    changeRefs: [],
  });
}

const SHARED = 'connects_to:service:reports->datastore:orders-db';

test('a well-evidenced blocked change blocks even beside an unrelated low-confidence change', (t) => {
  // The "blocked but passed" case: this used to be insufficient_evidence, which a CI
  // step failing on `blocked` let through.
  const g = gate(head({ shared: '0.90', external: '0.30' }));
  t.is(g.outcome, 'blocked');
  // The doubt is still reported, for the reviewer.
  t.true(g.reasons.some((r) => r.code === 'insufficient_evidence' && r.key?.includes('api.pay')));
  t.true(g.reasons.some((r) => r.code === 'blocked' && r.key === SHARED));
});

test('a blocked change exactly at the floor blocks; one just below is insufficient_evidence', (t) => {
  t.is(gate(head({ shared: '0.50' })).outcome, 'blocked');
  const below = gate(head({ shared: '0.49' }));
  t.is(below.outcome, 'insufficient_evidence');
  t.regex(below.reasons[0]!.text, /confidence 0\.49, below the policy's floor 0\.5/);
});

test('a blocked change below the floor beside a well-evidenced review is insufficient_evidence', (t) => {
  t.is(gate(head({ shared: '0.30', external: '0.90' })).outcome, 'insufficient_evidence');
});

test('review when only reviewed changes, all above the floor; doubt wins over review', (t) => {
  t.is(gate(head({ external: '0.90' })).outcome, 'review');
  t.is(gate(head({ external: '0.49' })).outcome, 'insufficient_evidence');
});

test('pass when nothing is reviewed or blocked, even with low-confidence informational changes', (t) => {
  const current = head({});
  const withNew: SnapshotSide = {
    ...current,
    entities: [...current.entities, entity('datastore:cache', 'datastore', '0.10')],
  };
  const g = gate(withNew);
  t.is(g.outcome, 'pass');
  t.is(g.counts.informational, 1);
});

test('no baseline is insufficient_evidence; differing coverage yields to a well-evidenced block only', (t) => {
  const first = gate(head({ shared: '0.90' }), null);
  t.is(first.outcome, 'insufficient_evidence');
  t.regex(first.reasons[0]!.text, /first audit/);
  t.is(gate(head({ shared: '0.90', sources: ['code', 'cloud'] })).outcome, 'blocked');
  t.is(
    gate(head({ external: '0.90', sources: ['code', 'cloud'] })).outcome,
    'insufficient_evidence',
  );
});

test('an open blocking case on the blocked change doubts it; one on an unrelated change does not', (t) => {
  const onShared: GateUncertainty = {
    id: 'u1',
    subject_key: 'service:reports',
    blocking: true,
    state: 'open',
  };
  t.is(gate(head({ shared: '0.90' }), BASE, [onShared]).outcome, 'insufficient_evidence');
  const onOther: GateUncertainty = { ...onShared, subject_key: 'external:api.pay.example' };
  t.is(gate(head({ shared: '0.90', external: '0.90' }), BASE, [onOther]).outcome, 'blocked');
  // A resolved case doubts nothing.
  t.is(
    gate(head({ shared: '0.90' }), BASE, [{ ...onShared, state: 'resolved' }]).outcome,
    'blocked',
  );
});
