/** The rules that turn a snapshot into uncertainty case candidates (analysis/uncertainty.ts). */
import test from 'ava';
import {
  LOW_CONFIDENCE,
  uncertaintyCandidates,
  type SnapshotEvidence,
  type SnapshotItem,
} from '../analysis/uncertainty';

let n = 0;
function ev(fields: Partial<SnapshotEvidence> & Pick<SnapshotEvidence, 'subject_key'>) {
  n += 1;
  return {
    id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    source_type: 'cloud',
    provider: 'docker-compose',
    evidence_kind: 'service-declared',
    object_key: null,
    location: { path: 'docker-compose.yml', start_line: n, end_line: n },
    content_sha256: String(n).padStart(64, '0'),
    attributes: {},
    ...fields,
  } satisfies SnapshotEvidence;
}
const item = (
  key: string,
  confidence: string,
  evidence: SnapshotEvidence[],
  extra: Partial<SnapshotItem> = {},
): SnapshotItem => ({
  canonical_key: key,
  kind: key.slice(0, key.indexOf(':')),
  confidence,
  evidence_ids: evidence.map((e) => e.id),
  attributes: { aliases: [] },
  contradictions: [],
  ...extra,
});

test('low confidence below the threshold, unresolved references, missing sources', (t) => {
  const declared = ev({ subject_key: 'service:api' });
  const weak = ev({
    subject_key: 'service:api',
    source_type: 'code',
    evidence_kind: 'connection-string',
    relationship_kind: 'connects_to',
    object_key: 'service:ledger',
  } as Partial<SnapshotEvidence> & { subject_key: string });
  const external = ev({ subject_key: 'service:api', object_key: 'external:api.stripe.com' });
  const out = uncertaintyCandidates({
    entities: [
      item('service:api', '0.60', [declared]),
      // Known only because the api's code names it: nothing declares it.
      item('service:ledger', '0.40', [weak]),
      item('external:api.stripe.com', '0.50', [external]),
    ],
    relationships: [
      item('connects_to:service:api->service:ledger', '0.40', [weak]),
      item('connects_to:service:api->external:api.stripe.com', String(LOW_CONFIDENCE.toFixed(2)), [
        external,
      ]),
    ],
    evidence: [declared, weak, external],
    missingSources: ['cicd'],
  });
  t.deepEqual(
    out.map((c) => [c.reason, c.scope, c.subject_key, c.blocking]),
    [
      ['low_confidence', 'entity', 'service:ledger', false],
      ['low_confidence', 'relationship', 'connects_to:service:api->service:ledger', false],
      ['unresolved_reference', 'entity', 'service:ledger', false],
      ['missing_source', 'source', 'source:cicd', true],
    ],
  );
  const unresolved = out.find((c) => c.reason === 'unresolved_reference')!;
  t.deepEqual(unresolved.evidence_ids, [weak.id]);
  t.deepEqual(unresolved.source_keys, ['docker-compose.yml']);
  t.regex(unresolved.detail, /docker-compose\.yml:2-2/);
});

test('contradictions: one case per field, alternatives with confidence and source types; blocking by field', (t) => {
  const a = ev({ subject_key: 'service:cart', attributes: { image_tag: '1.0', replicas: 1 } });
  const b = ev({
    subject_key: 'service:cart',
    provider: 'kubernetes',
    evidence_kind: 'workload-declared',
    location: { path: 'k8s/cart.yaml', start_line: 1, end_line: 20 },
    attributes: { image_tag: '1.1', replicas: 3 },
  });
  const cart = item('service:cart', '0.50', [a, b], {
    contradictions: [
      {
        field: 'image_tag',
        claims: [
          { value: '1.0', evidence_ids: [a.id], sources: ['docker-compose'] },
          { value: '1.1', evidence_ids: [b.id], sources: ['kubernetes'] },
        ],
      },
      {
        field: 'replicas',
        claims: [
          { value: 1, evidence_ids: [a.id], sources: ['docker-compose'] },
          { value: 3, evidence_ids: [b.id], sources: ['kubernetes'] },
        ],
      },
    ],
  });
  const input = { entities: [cart], relationships: [], evidence: [a, b], missingSources: [] };
  const out = uncertaintyCandidates(input);
  t.deepEqual(
    out.map((c) => [c.reason, c.scope, c.field, c.blocking]),
    [
      ['conflicting_evidence', 'attribute', 'image_tag', true],
      ['conflicting_evidence', 'attribute', 'replicas', false],
    ],
  );
  t.deepEqual(out[0]!.alternatives, [
    { value: '1.0', confidence: '0.60', evidence_ids: [a.id], sources: ['cloud'] },
    { value: '1.1', confidence: '0.60', evidence_ids: [b.id], sources: ['cloud'] },
  ]);
  t.deepEqual(out[0]!.source_keys, ['docker-compose.yml', 'k8s/cart.yaml']);
  // The fingerprint follows what the evidence says, not its ids: same content, same print.
  const again = uncertaintyCandidates({
    ...input,
    evidence: [
      { ...a, id: '10000000-0000-4000-8000-000000000001' },
      { ...b, id: '10000000-0000-4000-8000-000000000002' },
    ],
    entities: [
      {
        ...cart,
        contradictions: cart.contradictions.map((c) => ({
          ...c,
          claims: c.claims.map((cl) => ({
            ...cl,
            evidence_ids: [
              cl.evidence_ids[0] === a.id
                ? '10000000-0000-4000-8000-000000000001'
                : '10000000-0000-4000-8000-000000000002',
            ],
          })),
        })),
      },
    ],
  });
  t.is(again[0]!.fingerprint, out[0]!.fingerprint);
  const changed = uncertaintyCandidates({
    ...input,
    evidence: [a, { ...b, content_sha256: 'f'.repeat(64) }],
  });
  t.not(changed[0]!.fingerprint, out[0]!.fingerprint);
});
