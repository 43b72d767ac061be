/** Reconciliation rules on hand-made evidence: identity, corroboration, contradictions, tests. */
import test from 'ava';
import { analyzeCloud } from '../analysis/cloud';
import { reconcile, type StoredEvidence } from '../analysis/reconcile';

let n = 0;
function ev(
  fields: Partial<StoredEvidence> &
    Pick<StoredEvidence, 'source_type' | 'evidence_kind' | 'subject_key'>,
): StoredEvidence {
  n += 1;
  return {
    id: `e${n}`,
    provider: fields.source_type === 'code' ? 'npm' : 'docker-compose',
    relationship_kind: null,
    object_key: null,
    location: { path: 'x', start_line: 1, end_line: 1 },
    summary: 's',
    content_sha256: '0'.repeat(64),
    attributes: {},
    ...fields,
  };
}

test('a compose service, a code unit with another name and a datastore service merge; code corroborates the wiring', (t) => {
  const evidence = [
    ev({
      source_type: 'code',
      evidence_kind: 'unit-declared',
      subject_key: 'service:cart-api',
      attributes: { dir: 'services/cart', aliases: ['cart'] },
    }),
    ev({
      source_type: 'cloud',
      evidence_kind: 'service-declared',
      subject_key: 'service:cart',
      attributes: { build_context: 'services/cart', image_tag: '1.0' },
    }),
    ev({
      source_type: 'cloud',
      evidence_kind: 'service-declared',
      subject_key: 'service:redis',
      attributes: { image_tag: '7' },
    }),
    ev({
      source_type: 'cloud',
      evidence_kind: 'datastore-declared',
      subject_key: 'datastore:redis',
      attributes: { engine: 'redis' },
    }),
    ev({
      source_type: 'cloud',
      evidence_kind: 'env-reference',
      subject_key: 'service:cart',
      relationship_kind: 'connects_to',
      object_key: 'service:redis',
      attributes: { variable: 'REDIS_ADDR' },
    }),
    ev({
      source_type: 'code',
      evidence_kind: 'env-read',
      subject_key: 'service:cart-api',
      attributes: { variable: 'REDIS_ADDR' },
    }),
    ev({
      source_type: 'cloud',
      evidence_kind: 'workload-declared',
      subject_key: 'service:cart',
      provider: 'kubernetes',
      attributes: { image_tag: '1.1' },
    }),
    ev({
      source_type: 'code',
      evidence_kind: 'external-api-call',
      subject_key: 'service:cart-api',
      relationship_kind: 'calls',
      object_key: 'external:api.example.org',
      attributes: { in_test: true },
    }),
  ];
  const graph = reconcile(evidence);
  t.deepEqual(
    graph.entities.map((e) => e.canonical_key),
    ['datastore:redis', 'service:cart'],
  );
  const cart = graph.entities.find((e) => e.canonical_key === 'service:cart')!;
  t.deepEqual(cart.attributes.aliases, ['service:cart-api']);
  t.deepEqual(cart.sources, ['cloud', 'code']);
  t.is(cart.contradictions.length, 1);
  t.like(cart.contradictions[0], { field: 'image_tag' });
  t.deepEqual(
    cart.contradictions[0]!.claims.map((c) => c.value),
    ['1.0', '1.1'],
  );
  const redis = graph.entities.find((e) => e.canonical_key === 'datastore:redis')!;
  t.deepEqual(redis.attributes.aliases, ['service:redis']);
  t.deepEqual(
    graph.relationships.map((r) => r.canonical_key),
    ['connects_to:service:cart->datastore:redis'],
  );
  const rel = graph.relationships[0]!;
  t.deepEqual(
    rel.sources,
    ['cloud', 'code'],
    'the code read of REDIS_ADDR corroborates the configuration',
  );
  t.false(
    graph.entities.some((e) => e.kind === 'external'),
    'a URL seen only in a test is no architecture fact',
  );
  // Deterministic: order of evidence does not matter.
  t.deepEqual(reconcile([...evidence].reverse()), graph);
});

test('confidence rises with independent sources and falls with contradictions', (t) => {
  const one = reconcile([
    ev({ source_type: 'cloud', evidence_kind: 'service-declared', subject_key: 'service:a' }),
  ]);
  const two = reconcile([
    ev({ source_type: 'cloud', evidence_kind: 'service-declared', subject_key: 'service:a' }),
    ev({ source_type: 'code', evidence_kind: 'unit-declared', subject_key: 'service:a' }),
  ]);
  const contradicted = reconcile([
    ev({
      source_type: 'cloud',
      evidence_kind: 'service-declared',
      subject_key: 'service:a',
      attributes: { replicas: 1 },
    }),
    ev({
      source_type: 'cloud',
      evidence_kind: 'workload-declared',
      subject_key: 'service:a',
      attributes: { replicas: 3 },
    }),
  ]);
  t.is(one.entities[0]!.confidence, '0.60');
  t.is(two.entities[0]!.confidence, '0.80');
  t.is(contradicted.entities[0]!.confidence, '0.45');
});

test('relations to other things are no contradiction: two client libraries or two connections of one service', (t) => {
  const graph = reconcile([
    ev({ source_type: 'code', evidence_kind: 'unit-declared', subject_key: 'service:checkout' }),
    ev({
      source_type: 'code',
      evidence_kind: 'client-library',
      subject_key: 'service:checkout',
      relationship_kind: 'uses_client_library',
      object_key: 'package:npm/pg',
      attributes: { engine: 'postgres', category: 'datastore' },
    }),
    ev({
      source_type: 'code',
      evidence_kind: 'client-library',
      subject_key: 'service:checkout',
      relationship_kind: 'uses_client_library',
      object_key: 'package:npm/amqplib',
      attributes: { engine: 'rabbitmq', category: 'queue' },
    }),
    ev({
      source_type: 'cloud',
      evidence_kind: 'datastore-declared',
      subject_key: 'datastore:orders-db',
      attributes: { engine: 'postgres' },
    }),
    ev({
      source_type: 'cloud',
      evidence_kind: 'datastore-declared',
      subject_key: 'datastore:orders-db',
      provider: 'terraform',
      attributes: { engine: 'mysql' },
    }),
  ]);
  const checkout = graph.entities.find((e) => e.canonical_key === 'service:checkout')!;
  t.deepEqual(checkout.contradictions, []);
  // Two declarations of one datastore that disagree still are a contradiction.
  const db = graph.entities.find((e) => e.canonical_key === 'datastore:orders-db')!;
  t.deepEqual(
    db.contradictions.map((c) => [c.field, c.claims.map((x) => x.value)]),
    [['engine', ['mysql', 'postgres']]],
  );
});

test('compose and Kubernetes disagreeing on the container port is a contradiction; agreeing is none', async (t) => {
  const compose = (port: number) =>
    `services:\n  web:\n    image: acme/web:1.0\n    ports:\n      - "8080:${port}"\n`;
  const k8s = [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    '  name: web',
    'spec:',
    '  template:',
    '    spec:',
    '      containers:',
    '        - name: web',
    '          image: acme/web:1.0',
    '          ports:',
    '            - containerPort: 3000',
    '',
  ].join('\n');
  const graphOf = async (port: number) => {
    const out = await analyzeCloud([
      { path: 'docker-compose.yml', text: compose(port) },
      { path: 'k8s/web.yaml', text: k8s },
    ]);
    return reconcile(out.evidence.map((e, i) => ({ ...e, id: `e${i}` })));
  };
  const web = (await graphOf(3001)).entities.find((e) => e.canonical_key === 'service:web')!;
  t.deepEqual(
    web.contradictions.map((c) => [c.field, c.claims.map((x) => [x.value, x.sources])]),
    [
      [
        'container_port',
        [
          ['3000', ['kubernetes']],
          ['3001', ['docker-compose']],
        ],
      ],
    ],
  );
  const agreed = (await graphOf(3000)).entities.find((e) => e.canonical_key === 'service:web')!;
  t.deepEqual(agreed.contradictions, []);
});

test("a service's attributes come from statements about it, not from its connections (a client library's engine is the datastore's)", (t) => {
  const evidence = [
    ev({
      source_type: 'code',
      evidence_kind: 'unit-declared',
      subject_key: 'service:orders',
      attributes: { dir: 'services/orders', language: 'typescript' },
    }),
    ev({
      source_type: 'cloud',
      evidence_kind: 'datastore-declared',
      subject_key: 'datastore:db',
      attributes: { engine: 'postgresql', engine_version: '16' },
    }),
    ev({
      source_type: 'code',
      evidence_kind: 'client-library',
      subject_key: 'service:orders',
      relationship_kind: 'connects_to',
      object_key: 'datastore:db',
      attributes: { library: 'pg', engine: 'postgresql' },
    }),
  ];
  const graph = reconcile(evidence);
  const orders = graph.entities.find((e) => e.canonical_key === 'service:orders')!;
  t.like(orders.attributes, { dir: 'services/orders', language: 'typescript' });
  t.false('engine' in orders.attributes, JSON.stringify(orders.attributes));
  t.false('library' in orders.attributes);
  const db = graph.entities.find((e) => e.canonical_key === 'datastore:db')!;
  t.like(db.attributes, { engine: 'postgresql', engine_version: '16' });
  // The connection keeps what its record says.
  const edge = graph.relationships.find((r) => r.kind === 'connects_to')!;
  t.like(edge, { source_key: 'service:orders', target_key: 'datastore:db' });
});
