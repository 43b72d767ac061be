/**
 * Confidence that means something: an edge the service's own code establishes is well above the
 * gate floor 0.5; corroboration by an independent source raises it; weak evidence alone
 * (received-but-unread, a deployment variant) stays below the floor. And the accuracy
 * benchmark's calibration report. Small systems written for this test.
 */
import test from 'ava';
import { expectedOf, score } from '../bench/accuracy';
import type { SourceFile } from '../analysis/evidence';
import { reconcile, type Graph, type StoredEvidence } from '../analysis/reconcile';
import { analyzeFiles } from './helpers/pipeline';

const FLOOR = 0.5;
const files = (m: Record<string, string>): SourceFile[] =>
  Object.entries(m).map(([path, text]) => ({ path, text }));
const conf = (g: Graph, from: string, to: string) =>
  Number(g.relationships.find((r) => r.source_key === from && r.target_key === to)?.confidence);

const pythonUnit = (name: string, code: string) => ({
  [`${name}/requirements.txt`]: 'flask==3.0\nredis==5.0\npsycopg2==2.9\n',
  [`${name}/app.py`]: code,
});

test('an edge the service`s own code establishes is well above the floor; corroboration raises it', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      // Code alone: a connection string its code opens, a client built with a literal host.
      ...pythonUnit(
        'orders',
        'import psycopg2, redis\nconn = psycopg2.connect("postgresql://orders-db:5432/orders")\ncache = redis.Redis(host="cache")\n',
      ),
      // Code reading an address that configuration sets: two independent sources.
      ...pythonUnit('web', 'import os, requests\napi = os.environ["ORDERS_URL"]\n'),
      'docker-compose.yml': `services:
  web:
    build: ./web
    environment:
      ORDERS_URL: http://orders:8080
      LEGACY_URL: http://legacy:9000
  orders:
    build: ./orders
  legacy:
    image: vendor/legacy:1
  orders-db:
    image: postgres:16
  cache:
    image: redis:7
`,
    }),
  );
  const db = conf(graph, 'service:orders', 'datastore:orders-db');
  const cache = conf(graph, 'service:orders', 'datastore:cache');
  const read = conf(graph, 'service:web', 'service:orders');
  const received = conf(graph, 'service:web', 'service:legacy');
  t.true(db >= 0.7, `connection string the code opens: ${db}`);
  t.true(cache >= 0.7, `client built with a literal host: ${cache}`);
  t.true(read >= 0.7, `configured address the code reads: ${read}`);
  // Must not: an address handed to the service that its code never reads stays below the floor.
  t.true(received < FLOOR, `received, unread: ${received}`);
  t.true(read > received);
});

test('a record of a non-primary deployment variant is weak; a second source corroborates', (t) => {
  const base = (over: Partial<StoredEvidence>): StoredEvidence => ({
    id: over.id ?? 'e',
    source_type: 'cloud',
    provider: 'kubernetes',
    evidence_kind: 'env-reference',
    subject_key: 'service:api',
    relationship_kind: 'connects_to',
    object_key: 'datastore:db',
    location: { path: 'k8s/alt/api.yaml', start_line: 1, end_line: 1 },
    summary: 's',
    content_sha256: '0'.repeat(64),
    attributes: { variable: 'DB_HOST' },
    ...over,
  });
  const variant = reconcile([
    base({ id: 'v', attributes: { variable: 'DB_HOST', variant: 'alt', variant_primary: false } }),
  ]);
  t.true(Number(variant.relationships[0]!.confidence) < FLOOR);
  const one = reconcile([base({ id: 'a' })]);
  const two = reconcile([
    base({ id: 'a' }),
    base({
      id: 'b',
      source_type: 'code',
      provider: 'python-source',
      evidence_kind: 'connection-string',
      location: { path: 'api/app.py', start_line: 3, end_line: 3 },
      attributes: { category: 'datastore', engine: 'postgres', host: 'db' },
    }),
  ]);
  t.true(Number(two.relationships[0]!.confidence) > Number(one.relationships[0]!.confidence));
});

test('the calibration report: the share of true edges at >= 0.7, and the edges below 0.5', (t) => {
  const rel = (from: string, to: string, confidence: string) => ({
    canonical_key: `connects_to:${from}->${to}`,
    source_key: from,
    target_key: to,
    kind: 'connects_to',
    attributes: {},
    confidence,
    evidence_ids: [],
    sources: [],
    contradictions: [],
  });
  const entity = (key: string) => ({
    canonical_key: key,
    kind: key.split(':')[0]!,
    name: key.split(':')[1]!,
    attributes: { aliases: [] },
    confidence: '0.60',
    evidence_ids: [],
    sources: [],
    contradictions: [],
  });
  const graph: Graph = {
    entities: ['service:a', 'service:b', 'service:c', 'datastore:d'].map(entity),
    relationships: [
      rel('service:a', 'service:b', '0.80'), // true, high
      rel('service:a', 'datastore:d', '0.75'), // true, high
      rel('service:b', 'service:c', '0.70'), // false, high (exactly at the bound)
      rel('service:c', 'service:a', '0.49'), // false, low (one past the floor)
      rel('service:b', 'datastore:d', '0.30'), // true, low
      rel('service:c', 'datastore:d', '0.50'), // false, at the floor: neither band
      rel('service:a', 'service:c', '0.90'), // left open by the ground truth: neither share
    ],
  };
  const s = score(
    'x',
    expectedOf(
      [
        { from: 'service:a', to: 'service:b' },
        { from: 'service:a', to: 'datastore:d' },
        { from: 'service:b', to: 'datastore:d' },
      ],
      { ambiguousEdges: [{ from: 'service:a', to: 'service:c' }] },
    ),
    graph,
  );
  t.deepEqual(s.calibration, { high: { edges: 3, true: 2 }, low: { edges: 2, true: 1 } });
});
