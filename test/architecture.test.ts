/**
 * Architecture truth from a real repository: evidence citing exact lines with their hash,
 * identity resolved across code and configuration, snapshots kept per audit and immutable.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, type Tenant } from './helpers/factories';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { call } from './helpers/http';

let h: AuditHarness;
let tenant: Tenant;
let repo: TestRepo;
let repositoryId: string;

test.before(async () => {
  h = await startAuditHarness();
  tenant = await createTenant(h.app.services.db);
  repo = createRepo(SAMPLE_FILES);
  const created = await call(
    h.app.url,
    'POST',
    `/v1/workspaces/${tenant.workspaceId}/repositories`,
    {
      token: tenant.token,
      body: { name: 'shop', url: `file://${repo.dir}` },
    },
  );
  repositoryId = created.body.id;
});

test.after.always(async () => {
  await h?.close();
  repo?.remove();
});

const ws = () => `/v1/workspaces/${tenant.workspaceId}`;

async function audit(body: Record<string, unknown> = {}) {
  const started = await call(h.app.url, 'POST', `${ws()}/audits`, {
    token: tenant.token,
    body: { repository_id: repositoryId, ...body },
  });
  const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, started.body.id);
  if (done.body.status !== 'completed') throw new Error(JSON.stringify(done.body.stages));
  return done.body;
}

test.serial(
  'the snapshot: entities merged across sources, relationships with evidence a person can open',
  async (t) => {
    const first = await audit();
    const arch = await call(h.app.url, 'GET', `${ws()}/audits/${first.id}/architecture`, {
      token: tenant.token,
    });
    t.is(arch.status, 200);
    const truth = arch.body;
    t.is(truth.audit_id, first.id);
    t.deepEqual(truth.sources, ['code', 'cloud', 'cicd']);
    t.deepEqual(truth.missing_sources, []);
    t.is(truth.source_coverage, '1.0000');
    t.is(truth.entity_count, truth.entities.length);
    t.is(truth.relationship_count, truth.relationships.length);

    const entity = (key: string) => truth.entities.find((e: any) => e.canonical_key === key);
    // The api is one entity: a code unit (services/api/package.json), a compose service and a
    // Kubernetes Deployment, with evidence from both code and cloud.
    const api = entity('service:api');
    t.truthy(api);
    t.deepEqual(api.sources, ['cloud', 'code']);
    const apiEvidence = truth.evidence.filter((e: any) => api.evidence_ids.includes(e.id));
    const files = new Set(apiEvidence.map((e: any) => e.location.path));
    for (const f of ['docker-compose.yml', 'deploy/k8s/api.yaml', 'services/api/package.json'])
      t.true(files.has(f), `api cites ${f}`);
    // The compose `db` service runs postgres: it is a datastore, and `service:db` is its alias.
    const db = entity('datastore:db');
    t.truthy(db);
    t.deepEqual(db.attributes.aliases, ['service:db']);
    t.truthy(entity('pipeline:github-actions/ci'));

    const rel = truth.relationships.find(
      (r: any) => r.canonical_key === 'connects_to:service:api->datastore:db',
    );
    t.truthy(rel, JSON.stringify(truth.relationships.map((r: any) => r.canonical_key)));
    t.deepEqual(
      rel.sources,
      ['cloud', 'code'],
      'configuration wires DATABASE_URL and the code reads it',
    );
    t.true(
      Number(rel.confidence) > Number(entity('service:worker')?.confidence ?? 1) ||
        Number(rel.confidence) >= 0.7,
    );

    // Every evidence record cites lines whose hash is the content_sha256, at the audited commit.
    t.true(truth.evidence.length > 5);
    for (const e of truth.evidence) {
      t.is(e.source_ref, first.commit_sha);
      const text = fs.readFileSync(path.join(repo.dir, e.location.path), 'utf8');
      const lines = text
        .split('\n')
        .slice(e.location.start_line - 1, e.location.end_line)
        .join('\n');
      t.is(
        crypto.createHash('sha256').update(lines).digest('hex'),
        e.content_sha256,
        `${e.location.path}:${e.location.start_line}`,
      );
      t.true(e.id.length === 36);
    }
    const ids = new Set(truth.evidence.map((e: any) => e.id));
    for (const item of [...truth.entities, ...truth.relationships]) {
      for (const id of item.evidence_ids)
        t.true(ids.has(id), `${item.canonical_key} cites known evidence`);
    }
  },
);

test.serial(
  'snapshots are kept per audit, newest first, first_observed_at carried over, never rewritten',
  async (t) => {
    const history0 = await call(
      h.app.url,
      'GET',
      `${ws()}/repositories/${repositoryId}/architecture/snapshots`,
      { token: tenant.token },
    );
    const before = history0.body.items.length;
    repo.commit(
      { 'services/api/src/cache.ts': 'export const url = process.env.REDIS_URL;\n' },
      'cache',
    );
    const second = await audit();
    const history = await call(
      h.app.url,
      'GET',
      `${ws()}/repositories/${repositoryId}/architecture/snapshots`,
      { token: tenant.token },
    );
    t.is(history.status, 200);
    t.is(history.body.repository_id, repositoryId);
    t.is(history.body.items.length, before + 1);
    t.is(history.body.items[0].audit_id, second.id);
    t.is(history.body.items[0].version, String(before + 1));
    t.is(history.body.items[0].commit_sha, second.commit_sha);
    t.is(history.body.items[0].audit_status, 'completed');

    const latest = await call(
      h.app.url,
      'GET',
      `${ws()}/repositories/${repositoryId}/architecture`,
      { token: tenant.token },
    );
    t.is(latest.body.audit_id, second.id);
    const older = await call(
      h.app.url,
      'GET',
      `${ws()}/audits/${history.body.items[1].audit_id}/architecture`,
      { token: tenant.token },
    );
    const api = (truth: any) => truth.entities.find((e: any) => e.canonical_key === 'service:api');
    t.is(
      api(latest.body).first_observed_at,
      api(older.body).first_observed_at,
      'first seen in the earlier snapshot',
    );
    t.true(api(latest.body).last_observed_at > api(older.body).last_observed_at);

    await t.throwsAsync(h.app.services.db('architecture_snapshots').update({ status: 'edited' }), {
      message: /immutable/,
    });
  },
);

test('no snapshot before reconcile, another workspace, unknown repository: 404', async (t) => {
  const other = await createTenant(h.app.services.db);
  const cross = await call(
    h.app.url,
    'GET',
    `/v1/workspaces/${other.workspaceId}/repositories/${repositoryId}/architecture`,
    { token: other.token },
  );
  t.is(cross.status, 404);
  const none = await call(
    h.app.url,
    'GET',
    `/v1/workspaces/${other.workspaceId}/repositories/00000000-0000-4000-8000-000000000000/architecture/snapshots`,
    { token: other.token },
  );
  t.is(none.status, 404);
  const failed = await call(h.app.url, 'POST', `${ws()}/audits`, {
    token: tenant.token,
    body: { repository_id: repositoryId, branch_ref: 'nope' },
  });
  await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, failed.body.id);
  const arch = await call(h.app.url, 'GET', `${ws()}/audits/${failed.body.id}/architecture`, {
    token: tenant.token,
  });
  t.is(arch.status, 404);
});

test('unreadable input: malformed YAML, broken HCL, binary and invalid UTF-8 files; the audit completes and says why', async (t) => {
  const bad = createRepo({
    'deploy/broken.yaml': 'apiVersion: v1\nkind: Service\nmetadata: [unclosed\n',
    'infra/broken.tf': 'resource "aws_s3_bucket" "x" {\n  bucket = \n',
    'src/blob.ts': Buffer.from([0x00, 0x01, 0x02, 0xff, 0x00]),
    'src/latin1.py': Buffer.from('name = "caf\xe9"\n', 'latin1'),
    'package.json': '{"name": "bad-input"}',
  });
  try {
    const created = await call(h.app.url, 'POST', `${ws()}/repositories`, {
      token: tenant.token,
      body: { name: 'bad-input', url: `file://${bad.dir}` },
    });
    const started = await call(h.app.url, 'POST', `${ws()}/audits`, {
      token: tenant.token,
      body: { repository_id: created.body.id },
    });
    const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, started.body.id);
    t.is(done.body.status, 'completed', JSON.stringify(done.body.stages));
    const gaps = done.body.coverage_gaps.filter((g: any) => g.kind === 'analyzer');
    const byPath = Object.fromEntries(gaps.map((g: any) => [g.path, g.reason]));
    t.is(byPath['deploy/broken.yaml'], 'yaml_parse_error', JSON.stringify(gaps));
    t.is(byPath['infra/broken.tf'], 'terraform_parse_error');
    t.is(byPath['src/blob.ts'], 'binary_file');
    t.false('src/latin1.py' in byPath, 'invalid UTF-8 text is still read');
    for (const g of gaps) t.truthy(g.message);
    // A deployment description that could not be read keeps the snapshot from `complete`.
    const arch = await call(h.app.url, 'GET', `${ws()}/audits/${started.body.id}/architecture`, {
      token: tenant.token,
    });
    t.is(arch.body.status, 'partial');
  } finally {
    bad.remove();
  }
});

test('an identity conflict is said: two compose services built from one unit stay apart, the snapshot is partial, with a gap and an ambiguous_identity case', async (t) => {
  const shared = createRepo({
    'app/package.json': JSON.stringify({
      name: 'app',
      private: true,
      scripts: { start: 'node s.js' },
    }),
    'app/Dockerfile': 'FROM node:20\nCOPY . .\n',
    'docker-compose.yml':
      'services:\n  web:\n    build: ./app\n  worker:\n    build: ./app\n    command: node worker.js\n',
    '.github/workflows/ci.yml':
      'name: ci\non: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: npm test\n',
  });
  try {
    const created = await call(h.app.url, 'POST', `${ws()}/repositories`, {
      token: tenant.token,
      body: { name: 'shared-build', url: `file://${shared.dir}` },
    });
    const started = await call(h.app.url, 'POST', `${ws()}/audits`, {
      token: tenant.token,
      body: { repository_id: created.body.id },
    });
    const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, started.body.id);
    t.is(done.body.status, 'completed', JSON.stringify(done.body.stages));
    const arch = await call(h.app.url, 'GET', `${ws()}/audits/${started.body.id}/architecture`, {
      token: tenant.token,
    });
    t.deepEqual(arch.body.missing_sources, []);
    t.is(arch.body.status, 'partial');
    const services = arch.body.entities
      .filter((e: any) => e.kind === 'service')
      .map((e: any) => e.canonical_key)
      .sort();
    t.deepEqual(services, ['service:web', 'service:worker']);
    const gaps = done.body.coverage_gaps.filter((g: any) => g.kind === 'reconcile');
    t.is(gaps.length, 1, JSON.stringify(done.body.coverage_gaps));
    t.is(gaps[0].reason, 'identity_conflict');
    t.regex(gaps[0].message, /service:web and service:worker/);
    const cases = await call(
      h.app.url,
      'GET',
      `${ws()}/uncertainty-cases?repository_id=${created.body.id}`,
      { token: tenant.token },
    );
    const ambiguous = cases.body.items.filter((c: any) => c.reason === 'ambiguous_identity');
    t.is(ambiguous.length, 1, JSON.stringify(cases.body.items.map((c: any) => c.reason)));
    t.is(ambiguous[0].subject_key, 'service:web');
    t.true(ambiguous[0].evidence_ids.length >= 2, 'both declarations are cited');
  } finally {
    shared.remove();
  }
});

test('deployment variants are said: a guessed primary is a coverage gap and keeps the snapshot partial; the other variant adds no edge', async (t) => {
  const deployment = (name: string, image: string, env = '') =>
    `---\napiVersion: apps/v1\nkind: Deployment\nmetadata: { name: ${name} }\nspec:\n  template:\n    spec:\n      containers:\n        - name: ${name}\n          image: ${image}\n${env ? `          env: [{ name: DB_HOST, value: ${env} }]\n` : ''}`;
  const variants = createRepo({
    'k8s/apps.yaml':
      deployment('orders', 'acme/orders:1', 'orders-db') +
      deployment('orders-db', 'postgres:16') +
      deployment('users', 'acme/users:1', 'users-db') +
      deployment('users-db', 'postgres:16'),
    'k8s-pooled/apps.yaml':
      deployment('orders', 'acme/orders:1', 'pg-pool') +
      deployment('users', 'acme/users:1', 'orders-db') +
      deployment('pg-pool', 'bitnami/pgbouncer:1'),
    '.github/workflows/ci.yml':
      'name: ci\non: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make test\n',
  });
  try {
    const created = await call(h.app.url, 'POST', `${ws()}/repositories`, {
      token: tenant.token,
      body: { name: 'variants', url: `file://${variants.dir}` },
    });
    const started = await call(h.app.url, 'POST', `${ws()}/audits`, {
      token: tenant.token,
      body: { repository_id: created.body.id, source_scope: { source_types: ['cloud', 'cicd'] } },
    });
    const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, started.body.id);
    t.is(done.body.status, 'completed', JSON.stringify(done.body.stages));
    const gap = done.body.coverage_gaps.find((g: any) => g.reason === 'deployment_variant_guessed');
    t.truthy(gap, JSON.stringify(done.body.coverage_gaps));
    t.is(gap.path, 'k8s');
    t.regex(gap.message, /k8s-pooled/);
    const arch = await call(h.app.url, 'GET', `${ws()}/audits/${started.body.id}/architecture`, {
      token: tenant.token,
    });
    t.deepEqual(arch.body.missing_sources, []);
    t.is(arch.body.status, 'partial');
    const edges = arch.body.relationships
      .filter((r: any) => r.kind === 'connects_to')
      .map((r: any) => `${r.source_key} -> ${r.target_key}`)
      .sort();
    t.deepEqual(edges, [
      'service:orders -> datastore:orders-db',
      'service:users -> datastore:users-db',
    ]);
    t.false(arch.body.entities.some((e: any) => e.canonical_key.includes('pg-pool')));
    const cases = await call(
      h.app.url,
      'GET',
      `${ws()}/uncertainty-cases?repository_id=${created.body.id}`,
      { token: tenant.token },
    );
    const guessed = cases.body.items.find(
      (c: any) => c.subject_key === 'deployment:kubernetes/k8s',
    );
    t.truthy(guessed, JSON.stringify(cases.body.items.map((c: any) => c.subject_key)));
    t.like(guessed, { reason: 'conflicting_evidence', scope: 'source', blocking: false });
    t.deepEqual(
      guessed.alternatives.map((a: any) => a.value),
      ['k8s', 'k8s-pooled'],
    );
  } finally {
    variants.remove();
  }
});
