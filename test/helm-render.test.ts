/**
 * Helm template rendering (analysis/cloud/helm, issue 23): charts of our own rendered with their
 * defaults and read as Kubernetes manifests; evidence cited at the template lines it came from;
 * an unknown function is a coverage gap that keeps the snapshot partial; hostile charts (include
 * loops, huge ranges, output bombs) end in a gap quickly, never a crash.
 */
import test from 'ava';
import crypto from 'node:crypto';
import { analyzeCloud } from '../analysis/cloud';
import { renderString, newContext } from '../analysis/cloud/helm/exec';
import { parseTemplate } from '../analysis/cloud/helm/parse';
import { withoutRelease } from '../analysis/cloud/helm/manifests';
import { architectureStatus } from '../analysis/uncertainty';
import type { Evidence, SourceFile } from '../analysis/evidence';

const CHART = 'apiVersion: v2\nname: shop\nversion: 1.2.0\nappVersion: "2.0.1"\n';

const VALUES = `global:
  domain: cluster.local
image:
  repository: acme/shop
  tag: ""
services:
  - name: cart
    port: 8080
    env:
      REDIS_ADDR: "redis-{{ .Release.Name }}:6379"
  - name: orders
    port: 9090
    env:
      DB_URL: "postgres://orders-db:5432/orders"
resources:
  limits:
    cpu: 500m
    memory: 256Mi
`;

const HELPERS = `{{/* Names. */}}
{{- define "shop.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}{{ .Release.Name }}{{ else }}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}{{ end }}
{{- end -}}
{{- define "shop.labels" -}}
app.kubernetes.io/name: {{ include "shop.fullname" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}
`;

const DEPLOYMENTS = `{{- range $svc := .Values.services }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $svc.name }}
  labels:
    {{- include "shop.labels" $ | nindent 4 }}
spec:
  template:
    metadata:
      labels:
        app: {{ $svc.name }}
    spec:
      containers:
        - name: {{ $svc.name }}
          image: "{{ $.Values.image.repository }}:{{ $.Values.image.tag | default $.Chart.AppVersion }}"
          ports:
            - containerPort: {{ $svc.port }}
          env:
            {{- range $k, $v := $svc.env }}
            - name: {{ $k }}
              value: {{ tpl $v $ | quote }}
            {{- end }}
          {{- with $.Values.resources }}
          resources:
            {{- toYaml . | nindent 12 }}
          {{- end }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $svc.name }}
spec:
  selector:
    app: {{ $svc.name }}
  ports:
    - port: {{ $svc.port }}
{{- end }}
`;

const REDIS = `{{- if .Values.redis.enabled | default true }}
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: redis-{{ .Release.Name }}
spec:
  template:
    spec:
      containers:
        - name: redis
          image: redis:7.2
{{- end }}
`;

function chart(extra: SourceFile[] = []): SourceFile[] {
  return [
    { path: 'deploy/shop/Chart.yaml', text: CHART },
    { path: 'deploy/shop/values.yaml', text: `${VALUES}redis:\n  enabled: true\n` },
    { path: 'deploy/shop/templates/_helpers.tpl', text: HELPERS },
    { path: 'deploy/shop/templates/deployments.yaml', text: DEPLOYMENTS },
    { path: 'deploy/shop/templates/redis.yaml', text: REDIS },
    { path: 'deploy/shop/templates/NOTES.txt', text: 'Installed {{ .Release.Name }}.\n' },
    ...extra,
  ];
}

function sha256(s: string): string {
  return crypto.createHash('sha256').update(s).digest('hex');
}

/** Every citation verifies against the file as written. */
function verifiable(files: SourceFile[], e: Evidence): boolean {
  const f = files.find((x) => x.path === e.location.path);
  if (!f) return false;
  const lines = f.text.split('\n').slice(e.location.start_line - 1, e.location.end_line);
  return sha256(lines.join('\n')) === e.content_sha256;
}

test('a chart with include, tpl, range, with and toYaml renders; its workloads, env calls and limits count, cited at template lines', async (t) => {
  const files = chart();
  const out = await analyzeCloud(files);
  t.deepEqual(
    out.gaps.filter((g) => g.path.startsWith('deploy/')),
    [],
    'nothing of the chart is left unread',
  );
  const k8s = out.evidence.filter((e) => e.provider === 'kubernetes');
  const workloads = k8s.filter((e) => e.evidence_kind === 'workload-declared');
  t.deepEqual(workloads.map((e) => e.subject_key).sort(), [
    'service:cart',
    'service:orders',
    'service:redis',
  ]);
  const cart = workloads.find((e) => e.subject_key === 'service:cart')!;
  t.is(cart.location.path, 'deploy/shop/templates/deployments.yaml');
  t.is(cart.location.start_line, 3, 'the Deployment starts at template line 3');
  t.like(cart.attributes, { rendered_from: 'helm', image_tag: '2.0.1' });
  const containers = cart.attributes.containers as Array<Record<string, unknown>>;
  t.like(containers[0], {
    image: 'acme/shop:2.0.1',
    resource_limits_set: true,
    resource_limits: { cpu: '500m', memory: '256Mi' },
  });
  t.deepEqual(
    (cart.attributes.labels as Record<string, string>)['app.kubernetes.io/version'],
    '2.0.1',
  );

  // tpl renders `redis-{{ .Release.Name }}` from values; the release name is the renderer's
  // choice (nothing in the repository deploys the chart), so the name made from it drops it.
  const calls = k8s
    .filter((e) => e.relationship_kind === 'connects_to')
    .map((e) => `${e.subject_key}->${e.object_key}@${e.location.start_line}`)
    .sort();
  t.true(calls.includes('service:cart->service:redis@22'), calls.join(', '));
  t.true(
    calls.some((c) => c.startsWith('service:orders->') && c.includes('orders-db')),
    calls.join(', '),
  );
  t.true(
    k8s.some(
      (e) => e.evidence_kind === 'datastore-declared' && e.subject_key === 'datastore:redis',
    ),
  );
  for (const e of out.evidence) t.true(verifiable(files, e), `${e.summary} cites its lines`);
  t.is(
    architectureStatus({
      missingSources: [],
      gaps: out.gaps.filter((g) => g.path.startsWith('deploy/')),
    }),
    'complete',
  );
});

test('the release name a helmfile, Terraform helm_release or helm install gives the chart is the one rendered', async (t) => {
  for (const deployer of [
    { path: 'scripts/deploy.sh', text: 'helm upgrade --install -n prod web ./deploy/shop\n' },
    {
      path: 'deploy/helmfile.yaml',
      text: 'releases:\n  - name: web\n    namespace: prod\n    chart: ./shop\n',
    },
    {
      path: 'infra/main.tf',
      text: 'resource "helm_release" "x" {\n  name  = "web"\n  chart = "../deploy/shop"\n}\n',
    },
  ]) {
    const out = await analyzeCloud(chart([deployer]));
    const names = out.evidence
      .filter((e) => e.evidence_kind === 'workload-declared')
      .map((e) => e.subject_key)
      .sort();
    t.deepEqual(names, ['service:cart', 'service:orders', 'service:redis-web'], deployer.path);
  }
});

test('an unknown template function makes that template a coverage gap naming it; the others still render', async (t) => {
  const files = chart([
    {
      path: 'deploy/shop/templates/cron.yaml',
      text: 'apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: {{ .Values.name | frobnicate }}\n',
    },
  ]);
  const out = await analyzeCloud(files);
  const gaps = out.gaps.filter((g) => g.path === 'deploy/shop/templates/cron.yaml');
  t.is(gaps.length, 1);
  t.is(gaps[0]!.reason, 'helm_template_not_rendered');
  t.regex(gaps[0]!.message, /frobnicate/);
  t.false(out.evidence.some((e) => e.location.path === 'deploy/shop/templates/cron.yaml'));
  t.true(out.evidence.some((e) => e.subject_key === 'service:cart'));
  t.is(architectureStatus({ missingSources: [], gaps: out.gaps }), 'partial');
});

test('a template that does not parse, or needs a value the defaults lack, is a gap with the reason', async (t) => {
  const out = await analyzeCloud(
    chart([
      { path: 'deploy/shop/templates/bad.yaml', text: 'kind: {{ if .Values.x }}\n' },
      {
        path: 'deploy/shop/templates/needs.yaml',
        text: 'kind: {{ required "set db.host" .Values.db.host }}\n',
      },
    ]),
  );
  const why = (p: string) => out.gaps.find((g) => g.path === p)?.message ?? '';
  t.regex(why('deploy/shop/templates/bad.yaml'), /does not parse.*no end/);
  t.regex(why('deploy/shop/templates/needs.yaml'), /nil pointer|set db.host/);
});

test('hostile charts: include loops, huge ranges and output bombs end in a gap, fast', async (t) => {
  const hostile: SourceFile[] = [
    {
      path: 'deploy/shop/templates/_loop.tpl',
      text: '{{- define "a" -}}{{ include "b" . }}{{- end -}}{{- define "b" -}}{{ include "a" . }}{{- end -}}',
    },
    { path: 'deploy/shop/templates/loop.yaml', text: 'kind: {{ include "a" . }}\n' },
    {
      path: 'deploy/shop/templates/range.yaml',
      text: '{{ range until 100000000 }}x{{ end }}\n',
    },
    {
      path: 'deploy/shop/templates/bomb.yaml',
      text: '{{ $s := "xxxxxxxxxxxxxxxx" }}{{ range until 40 }}{{ $s = print $s $s }}{{ end }}{{ $s }}\n',
    },
    {
      path: 'deploy/shop/templates/self.yaml',
      text: '{{ define "self" }}{{ tpl "{{ include \\"self\\" . }}" . }}{{ end }}{{ include "self" . }}\n',
    },
  ];
  const started = Date.now();
  const out = await analyzeCloud(chart(hostile));
  t.true(Date.now() - started < 5000, `${Date.now() - started} ms`);
  const why = (p: string) => out.gaps.find((g) => g.path === p)?.message ?? '';
  t.regex(why('deploy/shop/templates/loop.yaml'), /nested more than \d+ deep/);
  t.regex(why('deploy/shop/templates/range.yaml'), /bound/);
  t.regex(why('deploy/shop/templates/bomb.yaml'), /bound/);
  t.regex(why('deploy/shop/templates/self.yaml'), /bound/);
  t.false(out.gaps.some((g) => g.reason === 'analyzer_error'));
  t.true(
    out.evidence.some((e) => e.subject_key === 'service:cart'),
    'the rest still renders',
  );
});

test('subcharts: their values under the parent key, global passed down, a false condition disables', async (t) => {
  const files: SourceFile[] = [
    {
      path: 'app/Chart.yaml',
      text: 'apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n  - name: api\n    version: 1.0.0\n  - name: cache\n    version: 1.0.0\n    condition: cache.enabled\n',
    },
    {
      path: 'app/values.yaml',
      text: 'global:\n  registry: reg.example\napi:\n  port: 7000\ncache:\n  enabled: false\n',
    },
    { path: 'app/charts/api/Chart.yaml', text: 'apiVersion: v2\nname: api\nversion: 1.0.0\n' },
    { path: 'app/charts/api/values.yaml', text: 'port: 80\nname: api\n' },
    {
      path: 'app/charts/api/templates/deploy.yaml',
      text: 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Values.name }}\nspec:\n  template:\n    spec:\n      containers:\n        - name: api\n          image: {{ .Values.global.registry }}/api:1.0\n          ports:\n            - containerPort: {{ .Values.port }}\n',
    },
    { path: 'app/charts/cache/Chart.yaml', text: 'apiVersion: v2\nname: cache\nversion: 1.0.0\n' },
    {
      path: 'app/charts/cache/templates/deploy.yaml',
      text: 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: cache\n',
    },
  ];
  const out = await analyzeCloud(files);
  const api = out.evidence.find(
    (e) => e.evidence_kind === 'workload-declared' && e.subject_key === 'service:api',
  );
  t.like((api?.attributes.containers as Array<Record<string, unknown>>)[0], {
    image: 'reg.example/api:1.0',
    ports: [7000],
  });
  t.false(out.evidence.some((e) => e.location.path.startsWith('app/charts/cache/templates/')));
  t.false(out.gaps.some((g) => g.path.startsWith('app/charts/cache/')));
});

test('template language: trim markers, else if, with/else, variables, and/or short-circuit, printf, break', (t) => {
  const render = (src: string, dot: unknown) => {
    const ctx = newContext(parseTemplate('').defines);
    return renderString(ctx, src, dot);
  };
  const dot = { a: { b: 'x' }, n: 3, list: ['p', 'q', 'r'], m: { z: 1, y: 2 }, empty: '' };
  t.is(render('{{- if .missing }}1{{ else if .a.b }}2{{ else }}3{{ end -}}', dot), '2');
  t.is(render('a  {{- " b " -}}  c', dot), 'a b c');
  t.is(render('{{ with .empty }}yes{{ else }}no{{ end }}', dot), 'no');
  t.is(render('{{ $x := 1 }}{{ range .list }}{{ $x = add $x 1 }}{{ end }}{{ $x }}', dot), '4');
  t.is(
    render('{{ range $i, $v := .list }}{{ if eq $i 2 }}{{ break }}{{ end }}{{ $v }}{{ end }}', dot),
    'pq',
  );
  t.is(render('{{ range $k, $v := .m }}{{ $k }}={{ $v }};{{ end }}', dot), 'y=2;z=1;');
  t.is(render('{{ and .missing .missing.deeper }}', dot), '', 'and stops at the first false');
  t.is(render('{{ or .a.b .missing.deeper }}', dot), 'x');
  t.is(render('{{ printf "%s:%d/%q" .a.b .n "v" }}', dot), 'x:3/"v"');
  t.is(render('{{ .m | toYaml | nindent 2 }}', dot), '\n  y: 2\n  z: 1');
  t.is(render('{{ dict "k" (list 1 2) | toJson }}', dot), '{"k":[1,2]}');
  t.is(render('{{ "a-b-c" | replace "-" "_" | upper | trunc 3 }}', dot), 'A_B');
  t.is(
    render('{{ default "d" .empty }} {{ ternary "y" "n" true }} {{ b64enc "hi" }}', dot),
    'd y aGk=',
  );
  t.is(render('{{ semverCompare ">=1.19-0" "v1.30.0" }}', dot), 'true');
  t.is(render('{{ 1000000.0 }}', dot), '1e+06', 'a float64 prints as Go prints it');
  t.throws(() => render('{{ .missing.deeper }}', dot), { message: /nil pointer/ });
});

test('the release name is dropped only where it made the name', (t) => {
  t.is(withoutRelease('shop-cart', 'shop'), 'cart');
  t.is(withoutRelease('cart-shop', 'shop'), 'cart');
  t.is(withoutRelease('cart-shop-x', 'shop'), 'cart');
  t.is(withoutRelease('shop', 'shop'), 'shop');
  t.is(withoutRelease('shopping', 'shop'), 'shopping');
  t.is(withoutRelease('cart-shopping', 'shop'), 'cart-shopping');
});

test('a secret a template fills from values is a default to override; one it writes out is committed', async (t) => {
  const out = await analyzeCloud(
    chart([
      {
        path: 'deploy/shop/templates/secret.yaml',
        text: 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  DB_PASSWORD: {{ .Values.dbPassword | default "s3cr3t-default" | b64enc | quote }}\n  API_TOKEN: {{ "aHVudGVyMg==" }}\nstringData:\n  ADMIN_PASSWORD: hunter2\n',
      },
    ]),
  );
  const secrets = out.evidence.filter(
    (e) => e.evidence_kind === 'literal-secret' && e.location.path.endsWith('secret.yaml'),
  );
  const byVar = new Map(secrets.map((e) => [String(e.attributes.variable), e]));
  t.regex(String(byVar.get('DB_PASSWORD')?.attributes.placeholder), /templated/);
  t.is(byVar.get('ADMIN_PASSWORD')?.attributes.placeholder, undefined);
  t.is(byVar.get('ADMIN_PASSWORD')?.location.start_line, 9);
});

test('values.yaml with a repeated key is read as Helm reads it (the last one wins)', async (t) => {
  const out = await analyzeCloud([
    { path: 'c/Chart.yaml', text: 'apiVersion: v2\nname: c\nversion: 1.0.0\n' },
    { path: 'c/values.yaml', text: 'name: first\nport: 1\nname: web\n' },
    {
      path: 'c/templates/d.yaml',
      text: 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Values.name }}\nspec:\n  template:\n    spec:\n      containers:\n        - name: web\n          image: acme/web:1.0\n',
    },
  ]);
  t.true(
    out.evidence.some(
      (e) => e.evidence_kind === 'workload-declared' && e.subject_key === 'service:web',
    ),
  );
  t.false(out.gaps.some((g) => g.reason === 'helm_template_not_rendered'));
});

test('a chart whose defaults lack a value it needs says which, and names the values files it ships', async (t) => {
  // values-prod.yaml lacks it too (one that renders would be taken: test/helm-deployers.test.ts).
  const out = await analyzeCloud([
    { path: 'c/Chart.yaml', text: 'apiVersion: v2\nname: c\nversion: 1.0.0\n' },
    { path: 'c/values.yaml', text: '# use -f values-prod.yaml\n' },
    { path: 'c/values-prod.yaml', text: 'image:\n  tag: "3"\n' },
    {
      path: 'c/templates/d.yaml',
      text: 'apiVersion: apps/v1\nkind: Deployment\nspec:\n  replicas: {{ .Values.app.replicas }}\n',
    },
  ]);
  const gap = out.gaps.find((g) => g.path === 'c/templates/d.yaml');
  t.is(gap?.reason, 'helm_template_not_rendered');
  t.regex(gap?.message ?? '', /nil pointer evaluating \.Values\.app\.replicas/);
  t.regex(gap?.message ?? '', /values-prod\.yaml/);
});
