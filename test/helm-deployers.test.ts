/**
 * What deployers pass to a Helm chart (issue 23): a helmfile release's values and `set`, a
 * Terraform `helm_release`'s values files and `set` blocks, an Argo CD Application's and a
 * Skaffold release's values, an umbrella chart's `file://` dependencies, and a chart's
 * `values-<env>.yaml` files as deployment variants. Small repositories written here, run through
 * the audit's analysis path (classify, analyzers, reconcile); every citation is checked against
 * the file as written. The last test audits a git repository made here end to end (HTTP API,
 * Temporal, PostgreSQL).
 */
import test from 'ava';
import { analyzeCloud } from '../analysis/cloud';
import type { SourceFile } from '../analysis/evidence';
import type { StoredEvidence } from '../analysis/reconcile';
import { architectureStatus } from '../analysis/uncertainty';
import {
  analyzeFiles,
  connections as edges,
  entityKeys as keys,
  verifiable,
} from './helpers/pipeline';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant } from './helpers/factories';
import { createRepo } from './helpers/git';
import { call } from './helpers/http';

/** The line of `file` that contains `text` (1-based). */
function lineOf(files: SourceFile[], path: string, text: string): number {
  const f = files.find((x) => x.path === path)!;
  return f.text.split('\n').findIndex((l) => l.includes(text)) + 1;
}

/** The evidence of the edge `from -> to`. */
function edgeEvidence(evidence: StoredEvidence[], from: string, to: string): StoredEvidence[] {
  return evidence.filter(
    (e) => e.subject_key === from && e.object_key === to && e.evidence_kind === 'env-reference',
  );
}

/** A chart `dir` named `name` whose one Deployment calls `.Values.db.host` and `.Values.api.url`. */
function chart(dir: string, name: string, values: string): SourceFile[] {
  return [
    { path: `${dir}/Chart.yaml`, text: `apiVersion: v2\nname: ${name}\nversion: 1.0.0\n` },
    { path: `${dir}/values.yaml`, text: values },
    {
      path: `${dir}/templates/deployment.yaml`,
      text: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  template:
    spec:
      containers:
        - name: ${name}
          image: "acme/${name}:1.0"
          env:
            - name: DATABASE_URL
              value: "postgres://{{ .Values.db.host }}:5432/${name}"
            - name: API_URL
              value: {{ .Values.api.url | quote }}
`,
    },
  ];
}

const SHOP_DEFAULTS = 'db:\n  host: localhost-db\napi:\n  url: http://localhost:9000\n';

test('a helmfile release: its values files, inline values and set are layered over the defaults; the edge cites the helmfile line', async (t) => {
  const files: SourceFile[] = [
    ...chart('charts/shop', 'shop', SHOP_DEFAULTS),
    {
      path: 'deploy/helmfile.yaml',
      text: `releases:
  - name: shop
    namespace: prod
    chart: ../charts/shop
    values:
      - values/shop.yaml
      - db:
          host: orders-db
    set:
      - name: api.url
        value: http://payments:8080
`,
    },
    { path: 'deploy/values/shop.yaml', text: 'db:\n  host: overridden-db\n' },
  ];
  const { graph, evidence } = await analyzeFiles(files);
  t.deepEqual(edges(graph), [
    'service:shop -> service:orders-db',
    'service:shop -> service:payments',
  ]);
  t.false(
    keys(graph).some((k) => k.includes('localhost')),
    'the chart defaults are not what is deployed',
  );
  const db = edgeEvidence(evidence, 'service:shop', 'service:orders-db')[0];
  t.truthy(db);
  t.like(db!.location, {
    path: 'deploy/helmfile.yaml',
    start_line: lineOf(files, 'deploy/helmfile.yaml', 'host: orders-db'),
  });
  t.like(db!.attributes.template as object, { path: 'charts/shop/templates/deployment.yaml' });
  const api = edgeEvidence(evidence, 'service:shop', 'service:payments')[0];
  t.like(api!.location, {
    path: 'deploy/helmfile.yaml',
    start_line: lineOf(files, 'deploy/helmfile.yaml', 'value: http://payments:8080'),
  });
  for (const e of evidence) t.true(verifiable(files, e), `${e.summary} cites its lines`);
  t.is(graph.variants, undefined, 'one deployer and no other values: no variants');
});

test('a Terraform helm_release: values = [file(...)] then set blocks, the set winning; a templatefile with interpolations is a gap', async (t) => {
  const files: SourceFile[] = [
    ...chart('charts/shop', 'shop', SHOP_DEFAULTS),
    {
      path: 'infra/main.tf',
      text: `resource "helm_release" "shop" {
  name  = "shop"
  chart = "../charts/shop"

  values = [
    file("\${path.module}/values/shop.yaml"),
    templatefile("\${path.module}/values/secrets.yaml", { password = var.password })
  ]

  set {
    name  = "db.host"
    value = "shop-postgres"
  }
}
`,
    },
    {
      path: 'infra/values/shop.yaml',
      text: 'db:\n  host: file-db\napi:\n  url: http://stock:7000\n',
    },
    { path: 'infra/values/secrets.yaml', text: 'db:\n  password: ${password}\n' },
  ];
  const { graph, evidence } = await analyzeFiles(files);
  t.deepEqual(edges(graph), [
    'service:shop -> service:shop-postgres',
    'service:shop -> service:stock',
  ]);
  const db = edgeEvidence(evidence, 'service:shop', 'service:shop-postgres')[0];
  t.like(db!.location, {
    path: 'infra/main.tf',
    start_line: lineOf(files, 'infra/main.tf', 'value = "shop-postgres"'),
  });
  const api = edgeEvidence(evidence, 'service:shop', 'service:stock')[0];
  t.like(api!.location, { path: 'infra/values/shop.yaml', start_line: 4 });
  for (const e of evidence) t.true(verifiable(files, e), `${e.summary} cites its lines`);
  const { gaps } = await analyzeCloud(files);
  const gap = gaps.find((g) => g.reason === 'helm_values_not_read');
  t.is(gap?.path, 'infra/main.tf');
  t.regex(gap?.message ?? '', /values\/secrets\.yaml.*template/);
  t.is(
    architectureStatus({ missingSources: [], gaps }),
    'partial',
    'an unread values file is said',
  );
});

test('an umbrella chart with file:// dependencies renders each subchart with its block of the parent values and global; no subchart is rendered twice', async (t) => {
  const files: SourceFile[] = [
    ...chart('services/orders/helm', 'orders', SHOP_DEFAULTS),
    ...chart('services/stock/helm', 'stock', SHOP_DEFAULTS),
    {
      path: 'deploy/umbrella/Chart.yaml',
      text: `apiVersion: v2
name: platform
version: 1.0.0
dependencies:
  - name: orders
    version: "*"
    repository: "file://../../services/orders/helm"
  - name: stock
    version: "*"
    repository: file://../../services/stock/helm
    condition: stock.enabled
`,
    },
    {
      path: 'deploy/umbrella/values.yaml',
      text: `global:
  env: prod
orders:
  db:
    host: orders-db
  api:
    url: http://stock
stock:
  enabled: true
  db:
    host: stock-db
`,
    },
  ];
  const { graph, evidence } = await analyzeFiles(files);
  t.deepEqual(edges(graph), [
    'service:orders -> service:orders-db',
    'service:orders -> service:stock',
    'service:stock -> service:stock-db',
  ]);
  t.false(
    keys(graph).includes('service:localhost-db'),
    'the subcharts are not rendered alone with their defaults',
  );
  const db = edgeEvidence(evidence, 'service:orders', 'service:orders-db')[0];
  // The umbrella's values.yaml is a chart's values: the citation stays on the template line, and
  // names where the value used is written.
  t.like(db!.location, { path: 'services/orders/helm/templates/deployment.yaml', start_line: 12 });
  t.deepEqual(db!.attributes.values_from, [
    { values_path: 'db.host', path: 'deploy/umbrella/values.yaml', line: 5 },
  ]);
  for (const e of evidence) t.true(verifiable(files, e), `${e.summary} cites its lines`);

  // The condition false: the subchart is not deployed at all.
  const off = files.map((f) =>
    f.path === 'deploy/umbrella/values.yaml'
      ? { ...f, text: f.text.replace('enabled: true', 'enabled: false') }
      : f,
  );
  const disabled = await analyzeFiles(off);
  t.false(edges(disabled.graph).some((e) => e.startsWith('service:stock ')));
});

test('values-prod.yaml is a deployment variant: the graph is the chart defaults, the variant edges are left out and said', async (t) => {
  const files: SourceFile[] = [
    ...chart('chart', 'shop', 'db:\n  host: catalog-db\napi:\n  url: http://stock\n'),
    { path: 'chart/values-prod.yaml', text: 'db:\n  host: prod-db.internal\n' },
  ];
  const { graph, evidence } = await analyzeFiles(files);
  t.deepEqual(edges(graph), [
    'service:shop -> service:catalog-db',
    'service:shop -> service:stock',
  ]);
  t.false(
    keys(graph).some((k) => k.includes('prod-db')),
    'never merged onto the primary',
  );
  const v = graph.variants?.find((x) => x.family === 'helm');
  t.like(v, {
    primary: 'chart',
    others: ['values-prod.yaml'],
    chosen_by: 'chart-defaults',
    guessed: false,
    dropped_edges: ['service:shop -> external:prod-db.internal'],
  });
  t.regex(v?.detail ?? '', /values-prod\.yaml/);
  const db = edgeEvidence(evidence, 'service:shop', 'service:catalog-db')[0];
  t.like(db!.location, { path: 'chart/templates/deployment.yaml', start_line: 12 });
  t.deepEqual(db!.attributes.values_from, [
    { values_path: 'db.host', path: 'chart/values.yaml', line: 2 },
  ]);
  for (const e of evidence) t.true(verifiable(files, e), `${e.summary} cites its lines`);
});

test('two deployers with different values: the most complete is the graph, the other a variant, and the choice is a guess that keeps the snapshot partial', async (t) => {
  const files: SourceFile[] = [
    ...chart('chart', 'shop', SHOP_DEFAULTS),
    {
      path: 'argocd/shop.yaml',
      text: `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: shop
spec:
  source:
    repoURL: https://example.invalid/shop.git
    path: chart
    helm:
      valueFiles:
        - values-prod.yaml
      parameters:
        - name: api.url
          value: http://catalog
`,
    },
    { path: 'chart/values-prod.yaml', text: 'db:\n  host: argo-db\n' },
    {
      path: 'skaffold.yaml',
      text: `apiVersion: skaffold/v4beta11
kind: Config
manifests:
  helm:
    releases:
      - name: shop
        chartPath: chart
        setValues:
          db.host: dev-db
`,
    },
  ];
  const { graph, evidence } = await analyzeFiles(files);
  t.deepEqual(edges(graph), ['service:shop -> service:argo-db', 'service:shop -> service:catalog']);
  const v = graph.variants?.find((x) => x.family === 'helm');
  t.like(v, { primary: 'argocd/shop.yaml', chosen_by: 'deploy-step', guessed: true });
  // Skaffold's db.host and the chart default api.url (Skaffold passes no api.url).
  t.deepEqual(v?.dropped_edges, ['service:shop -> service:dev-db']);
  t.false(
    v?.others.includes('values-prod.yaml'),
    'a values file a deployer layers is no variant of its own',
  );
  const api = edgeEvidence(evidence, 'service:shop', 'service:catalog')[0];
  t.like(api!.location, {
    path: 'argocd/shop.yaml',
    start_line: lineOf(files, 'argocd/shop.yaml', 'value: http://catalog'),
  });
  for (const e of evidence) t.true(verifiable(files, e), `${e.summary} cites its lines`);
  const guessedVariant = (graph.variants ?? []).some((x) => x.guessed);
  t.is(architectureStatus({ missingSources: [], guessedVariant }), 'partial');
});

test('a helmfile values file that is a template, or missing, is a gap naming it; the release still renders with what can be read', async (t) => {
  const files: SourceFile[] = [
    ...chart('charts/shop', 'shop', SHOP_DEFAULTS),
    {
      path: 'helmfile.yaml',
      text: `releases:
  - name: shop
    chart: ./charts/shop
    values:
      - env/{{ .Environment.Name }}.yaml.gotmpl
      - env/common.yaml.gotmpl
      - db:
          host: "<script>alert(1)</script>"
`,
    },
    { path: 'env/common.yaml.gotmpl', text: 'db:\n  host: {{ env "DB_HOST" }}\n' },
  ];
  const out = await analyzeCloud(files);
  const gaps = out.gaps.filter((g) => g.reason === 'helm_values_not_read');
  t.is(gaps.length, 2);
  t.true(gaps.every((g) => g.path === 'helmfile.yaml'));
  t.true(gaps.some((g) => /Environment\.Name.*not among the audited files/.test(g.message)));
  t.true(gaps.some((g) => /common\.yaml\.gotmpl.*template/.test(g.message)));
  t.false(
    out.evidence.some((e) => e.object_key?.includes('<')),
    'a hostile host is no entity key',
  );
});

test('a chart whose own values.yaml renders nothing (use -f values-<env>.yaml): the values file that renders the most is the graph, a guess', async (t) => {
  const files: SourceFile[] = [
    ...chart('deploy/chart', 'shop', '# Use -f values-java.yaml or -f values-native.yaml\n'),
    {
      path: 'deploy/chart/values-java.yaml',
      text: 'db:\n  host: shop-db\napi:\n  url: http://stock\n',
    },
    {
      path: 'deploy/chart/values-native.yaml',
      text: 'db:\n  host: native-db\napi:\n  url: http://stock\n',
    },
  ];
  const { graph, evidence } = await analyzeFiles(files);
  t.deepEqual(edges(graph), ['service:shop -> service:shop-db', 'service:shop -> service:stock']);
  const v = graph.variants?.find((x) => x.family === 'helm');
  t.like(v, {
    primary: 'deploy/chart/values-java.yaml',
    chosen_by: 'most-complete',
    guessed: true,
  });
  t.deepEqual(v?.others, ['deploy/chart (values.yaml)', 'values-native.yaml']);
  t.deepEqual(v?.dropped_edges, ['service:shop -> service:native-db']);
  const { gaps } = await analyzeCloud(files);
  t.false(gaps.some((g) => g.reason === 'helm_template_not_rendered'));
  const db = edgeEvidence(evidence, 'service:shop', 'service:shop-db')[0];
  t.like(db!.location, { path: 'deploy/chart/values-java.yaml', start_line: 2 });
  for (const e of evidence) t.true(verifiable(files, e), `${e.summary} cites its lines`);
});

test('an audit of a repository with a helmfile and a values-prod.yaml: the helmfile values are the graph, the evidence cites the helmfile line, the variant is a coverage gap', async (t) => {
  let h: AuditHarness | undefined;
  const files: SourceFile[] = [
    ...chart('charts/shop', 'shop', SHOP_DEFAULTS),
    { path: 'charts/shop/values-prod.yaml', text: 'db:\n  host: prod-db\n' },
    {
      path: 'helmfile.yaml',
      text: 'releases:\n  - name: shop\n    chart: ./charts/shop\n    values:\n      - db:\n          host: orders-db\n        api:\n          url: http://stock\n',
    },
  ];
  const repo = createRepo(Object.fromEntries(files.map((f) => [f.path, f.text])));
  try {
    h = await startAuditHarness();
    const tenant = await createTenant(h.app.services.db);
    const ws = `/v1/workspaces/${tenant.workspaceId}`;
    const created = await call(h.app.url, 'POST', `${ws}/repositories`, {
      token: tenant.token,
      body: { name: 'helm-shop', url: `file://${repo.dir}` },
    });
    const started = await call(h.app.url, 'POST', `${ws}/audits`, {
      token: tenant.token,
      body: { repository_id: created.body.id, source_scope: { source_types: ['cloud'] } },
    });
    const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, started.body.id);
    t.is(done.body.status, 'completed', JSON.stringify(done.body.stages));
    const gap = done.body.coverage_gaps.find(
      (g: { reason: string }) => g.reason === 'deployment_variant_chosen',
    );
    t.truthy(gap, JSON.stringify(done.body.coverage_gaps));
    t.regex(gap.message, /values-prod\.yaml/);
    const arch = await call(h.app.url, 'GET', `${ws}/audits/${started.body.id}/architecture`, {
      token: tenant.token,
    });
    const got = arch.body.relationships
      .filter((r: { kind: string }) => r.kind === 'connects_to')
      .map((r: { source_key: string; target_key: string }) => `${r.source_key} -> ${r.target_key}`)
      .sort();
    t.deepEqual(got, ['service:shop -> service:orders-db', 'service:shop -> service:stock']);
    t.false(
      arch.body.entities.some((e: { canonical_key: string }) =>
        e.canonical_key.includes('prod-db'),
      ),
    );
    const rel = arch.body.relationships.find(
      (r: { target_key: string }) => r.target_key === 'service:orders-db',
    );
    // The edge's evidence cites the helmfile line `host: orders-db`, and the cited lines verify.
    const cited = [];
    for (const id of rel.evidence_ids as string[]) {
      const one = await call(h.app.url, 'GET', `${ws}/audits/${started.body.id}/evidence/${id}`, {
        token: tenant.token,
      });
      cited.push(one.body);
    }
    const fromHelmfile = cited.find((c) => c.path === 'helmfile.yaml');
    t.truthy(fromHelmfile, JSON.stringify(cited).slice(0, 2000));
    t.is(fromHelmfile.start_line, 6);
    t.deepEqual(fromHelmfile.lines, [{ number: 6, text: '          host: orders-db' }]);
    t.is(fromHelmfile.verification, 'verified');
  } finally {
    await h?.close();
    repo.remove();
  }
});

test('a chart with very many values files: a bounded number is rendered, the rest named in a gap', async (t) => {
  const files: SourceFile[] = [...chart('chart', 'shop', SHOP_DEFAULTS)];
  for (let i = 0; i < 40; i++)
    files.push({
      path: `chart/values-env${String(i).padStart(2, '0')}.yaml`,
      text: `db:\n  host: db-${i}\n`,
    });
  const started = Date.now();
  const out = await analyzeCloud(files);
  t.true(Date.now() - started < 20_000);
  const gap = out.gaps.find((g) => g.reason === 'helm_variants_not_rendered');
  t.regex(gap?.message ?? '', /41 deployments .* only 13 are rendered/);
  const v = out.evidence.find((e) => e.evidence_kind === 'deployment-variants');
  t.is((v?.attributes.others as string[]).length, 12);
});
