/**
 * Helm charts: Chart.yaml metadata and dependencies, images named in values files, and the
 * templates rendered with the chart's defaults (./helm/render.ts) and read as Kubernetes
 * manifests, their evidence citing the template lines the rendered objects came from. A template
 * that cannot be rendered is a coverage gap saying why (its plain `{{ .Values.x }}` env entries
 * are still read).
 */
import {
  entityKey,
  type AnalyzerGap,
  type AnalyzerOutput,
  type Evidence,
  type SourceFile,
} from '../evidence';
import { evidence } from '../shared/evidence';
import { imageAttributes, imageKey, parseImageRef } from '../shared/images';
import { basename, dirname } from '../shared/paths';
import { asArray, asString, isRecord } from '../shared/values';
import { parseYamlDocuments, type PathItem, type YamlDoc } from '../shared/yaml';
import type { BuiltEngine } from './built-images';
import { classifyImage } from './common';
import { envReferences, type HostResolver } from './env';
import { renderedEvidence } from './helm/manifests';

const PROVIDER = 'helm';

/** Directories holding a Chart.yaml. */
export function chartDirs(files: SourceFile[]): Set<string> {
  return new Set(
    files.filter((f) => basename(f.path) === 'Chart.yaml').map((f) => dirname(f.path)),
  );
}

/** The chart a file belongs to, and its role in it, or null when it is not part of a chart. */
export function helmRole(
  path: string,
  charts: Set<string>,
): { chart: string; role: 'chart' | 'values' | 'template' } | null {
  const dir = dirname(path);
  const name = basename(path);
  if (charts.has(dir)) {
    if (name === 'Chart.yaml') return { chart: dir, role: 'chart' };
    if (/^values([.-][^/]*)?\.ya?ml$/.test(name)) return { chart: dir, role: 'values' };
  }
  // Nearest enclosing chart whose templates/ folder holds the file.
  const parts = path.split('/');
  for (let i = parts.length - 2; i >= 0; i--) {
    if (parts[i] !== 'templates') continue;
    const chart = parts.slice(0, i).join('/');
    if (charts.has(chart)) return { chart, role: 'template' };
  }
  return null;
}

interface Chart {
  name: string;
  dependencies: string[];
  appVersion: string | null;
  version: string | null;
  /**
   * The tag an empty `image.tag` takes once rendered: `appVersion`, unless a template writes
   * `.Values...tag | default .Chart.Version` (then the chart's version).
   */
  defaultTag: string | null;
}

/** A template that fills an empty image tag with the chart's version rather than its appVersion. */
const TAG_FROM_CHART_VERSION = /\.Values\.[\w.]*tag\s*\|\s*default\s+\.Chart\.Version\b/i;

/**
 * Analyzes the files of Helm charts (those `helmRole` recognizes); `all` are every audited file
 * (`.Files.Get`), `built` what images the repository builds run.
 */
export function analyzeHelm(
  files: SourceFile[],
  all: SourceFile[] = files,
  built?: BuiltEngine,
): AnalyzerOutput {
  const charts = chartDirs(files);
  const evidence: Evidence[] = [];
  const gaps: AnalyzerGap[] = [];
  const meta = new Map<string, Chart>();
  const docs = new Map<string, YamlDoc>();
  for (const file of files) {
    const role = helmRole(file.path, charts);
    if (role?.role !== 'chart') continue;
    const y = parseYamlDocuments(file);
    for (const message of y.errors)
      gaps.push({ path: file.path, reason: 'yaml_parse_error', message });
    const doc = y.docs[0];
    if (!doc || !isRecord(doc.value)) continue;
    docs.set(file.path, doc);
    const v = doc.value;
    const deps = asArray(v.dependencies).filter(isRecord);
    meta.set(role.chart, {
      name: asString(v.name) ?? (basename(role.chart) || 'root'),
      dependencies: deps.map((d) => asString(d.alias) ?? asString(d.name) ?? ''),
      appVersion: asString(v.appVersion),
      version: asString(v.version),
      defaultTag: asString(v.appVersion),
    });
  }
  for (const file of files) {
    const role = helmRole(file.path, charts);
    const chart = role?.role === 'template' ? meta.get(role.chart) : undefined;
    if (chart && TAG_FROM_CHART_VERSION.test(file.text)) chart.defaultTag = chart.version;
  }
  const defaults = new Map<string, unknown>();
  for (const file of files) {
    const role = helmRole(file.path, charts);
    if (role?.role !== 'values' || !/^values\.ya?ml$/.test(basename(file.path))) continue;
    defaults.set(role.chart, parseYamlDocuments(file).docs[0]?.value);
  }
  const templates = new Map<string, SourceFile[]>();
  for (const file of files) {
    const role = helmRole(file.path, charts);
    if (role?.role !== 'template') continue;
    const list = templates.get(role.chart);
    if (list) list.push(file);
    else templates.set(role.chart, [file]);
  }
  const rendered = renderedEvidence(charts, templates, all.concat(files), built);
  for (const e of rendered.evidence) evidence.push(e);
  for (const g of rendered.gaps) gaps.push(g);
  for (const file of files) {
    const role = helmRole(file.path, charts);
    const chart = role ? meta.get(role.chart) : undefined;
    if (!role) continue;
    if (role.role === 'template') {
      if (rendered.handled.has(file.path)) continue;
      if (chart) evidence.push(...templateEnvEvidence(file, chart, defaults.get(role.chart)));
      if (!rendered.gapPaths.has(file.path))
        gaps.push({
          path: file.path,
          reason: 'helm_template_not_rendered',
          message: `Helm template of chart ${chart?.name ?? role.chart} is not rendered (the chart's Chart.yaml was not read); the resources it defines are not analyzed`,
        });
    } else if (role.role === 'chart') {
      const doc = docs.get(file.path);
      if (doc && chart) evidence.push(...chartEvidence(file, doc, chart));
    } else if (chart) {
      const y = parseYamlDocuments(file);
      for (const message of y.errors)
        gaps.push({ path: file.path, reason: 'yaml_parse_error', message });
      for (const doc of y.docs) evidence.push(...valuesEvidence(file, doc, chart));
    }
  }
  return { evidence, gaps };
}

const VALUES_REF = /\{\{-?\s*\$?\.Values\.([\w.]+)\s*(?:\|\s*(?:quote|squote|toString)\s*)*-?\}\}/g;

/** In-cluster names: a single label, or `<svc>.<ns>(.svc.cluster.local)`, is a service. */
const clusterResolver: HostResolver = (host) => {
  const short = host.replace(/\.svc(\.cluster\.local)?\.?$/, '');
  const labels = short.split('.');
  if (labels.length > (short === host ? 1 : 2)) return null;
  const name = labels[0] ?? '';
  return { key: entityKey('service', name), name, via: 'helm-values' };
};

/**
 * Templates are not rendered, but an env entry whose value is only `{{ .Values.a.b }}` (quoted or
 * not, with `| quote`) is read: `- name: X` then `value: ...` on the next line, the value looked up
 * in the chart's values.yaml, then resolved like any env value. Anything else stays a gap.
 */
function templateEnvEvidence(file: SourceFile, chart: Chart, values: unknown): Evidence[] {
  const out: Evidence[] = [];
  const lines = file.text.split('\n');
  lines.forEach((line, i) => {
    const name = /^\s*-\s*name:\s*["']?([A-Za-z_][A-Za-z0-9_]*)["']?\s*$/.exec(line)?.[1];
    const next = lines[i + 1] ?? '';
    const written = /^\s*value:\s*(.+?)\s*$/.exec(next)?.[1];
    if (!name || !written || !written.includes('.Values.')) return;
    let unresolved = false;
    const value = written
      .replace(VALUES_REF, (_m, path: string) => {
        const v = lookup(values, path);
        if (v === null) unresolved = true;
        return v ?? '';
      })
      .replace(/^(["'])(.*)\1$/, '$2');
    if (unresolved || value.includes('{{')) return;
    for (const r of envReferences(name, value, clusterResolver, 'helm-values')) {
      if (r.kind !== 'env-reference') continue;
      out.push(
        evidence(
          file,
          { start: i + 1, end: i + 2 },
          {
            source: 'cloud',
            provider: PROVIDER,
            kind: r.kind,
            subject: entityKey('service', chart.name),
            relationship: r.relationship,
            object: r.object,
            summary: `Helm chart ${chart.name} template ${r.summary} (from values.yaml)`,
            attributes: {
              ...r.attributes,
              values_refs: [...written.matchAll(VALUES_REF)].map((m) => m[1]),
            },
          },
        ),
      );
    }
  });
  return out;
}

function lookup(values: unknown, path: string): string | null {
  let v: unknown = values;
  for (const k of path.split('.')) v = isRecord(v) ? v[k] : undefined;
  return typeof v === 'string' || typeof v === 'number' ? String(v) : null;
}

function chartEvidence(file: SourceFile, doc: YamlDoc, chart: Chart): Evidence[] {
  const v = doc.value as Record<string, unknown>;
  const subject = entityKey('service', chart.name);
  const deps = asArray(v.dependencies).map((d) =>
    isRecord(d)
      ? {
          name: asString(d.name),
          alias: asString(d.alias),
          version: asString(d.version),
          repository: asString(d.repository),
          condition: asString(d.condition),
        }
      : null,
  );
  const out: Evidence[] = [
    evidence(file, doc.span([]), {
      source: 'cloud',
      provider: PROVIDER,
      kind: 'chart-declared',
      subject,
      summary: `Helm chart ${[chart.name, asString(v.version)].filter(Boolean).join(' ')} is declared`,
      attributes: {
        name: chart.name,
        version: asString(v.version),
        appVersion: asString(v.appVersion),
        apiVersion: asString(v.apiVersion),
        type: asString(v.type) ?? 'application',
        dependencies: deps.filter((d) => d !== null),
        chart_dir: dirname(file.path),
      },
    }),
  ];
  deps.forEach((d, i) => {
    const depName = d?.alias ?? d?.name;
    if (!d || !depName) return;
    const span = doc.span(['dependencies', i]);
    out.push(
      evidence(file, span, {
        source: 'cloud',
        provider: PROVIDER,
        kind: 'depends-on',
        subject,
        relationship: 'depends_on',
        object: entityKey('service', depName),
        summary:
          `Helm chart ${chart.name} depends on chart ${d.name ?? depName} ${d.version ?? ''}`.trim(),
        attributes: { form: 'chart-dependency', ...d },
      }),
    );
    const cls = classifyImage(parseImageRef(d.name ?? ''));
    if (cls) {
      out.push(
        evidence(file, span, {
          source: 'cloud',
          provider: PROVIDER,
          kind: cls.kind === 'datastore' ? 'datastore-declared' : 'queue-declared',
          subject: entityKey(cls.kind, depName),
          summary: `Helm chart ${chart.name} bundles a ${cls.engine} ${cls.kind} (chart ${d.name ?? depName})`,
          attributes: {
            engine: cls.engine,
            chart: d.name,
            version: d.version,
            service_key: entityKey('service', depName),
          },
        }),
      );
    }
  });
  return out;
}

/** `image: {registry, repository, tag, digest}` objects and `image: "repo:tag"` strings anywhere in values. */
function valuesEvidence(file: SourceFile, doc: YamlDoc, chart: Chart): Evidence[] {
  const out: Evidence[] = [];
  const walk = (v: unknown, path: PathItem[]) => {
    if (Array.isArray(v)) {
      v.forEach((x, i) => walk(x, [...path, i]));
      return;
    }
    if (!isRecord(v)) return;
    const repository = asString(v.repository);
    const key = path[path.length - 1];
    if (
      repository &&
      (key === 'image' || typeof v.tag !== 'undefined' || /image/i.test(String(key ?? '')))
    ) {
      const registry = asString(v.registry);
      const tag = asString(v.tag) || null;
      const digest = asString(v.digest) || null;
      const raw = `${registry ? `${registry}/` : ''}${repository}${tag ? `:${tag}` : ''}${digest ? `@${digest}` : ''}`;
      out.push(...imageEvidence(file, doc, path, raw, chart, tag === null && digest === null));
      return;
    }
    for (const [k, x] of Object.entries(v)) {
      const s = k === 'image' ? asString(x) : null;
      if (
        s &&
        /^[\w.-]+(\/[\w.-]+)*(:[\w.-]+)?(@sha256:[0-9a-f]+)?$/i.test(s) &&
        (s.includes('/') || s.includes(':'))
      ) {
        out.push(...imageEvidence(file, doc, [...path, k], s, chart, false));
      } else walk(x, [...path, k]);
    }
  };
  walk(doc.value, []);
  return out;
}

function imageEvidence(
  file: SourceFile,
  doc: YamlDoc,
  path: PathItem[],
  raw: string,
  chart: Chart,
  tagFromAppVersion: boolean,
): Evidence[] {
  const image = parseImageRef(raw);
  if (!image) return [];
  // Values under a dependency's key configure that subchart.
  const top = typeof path[0] === 'string' ? path[0] : null;
  const owner = top && chart.dependencies.includes(top) ? top : chart.name;
  const attributes: Record<string, unknown> = {
    ...imageAttributes(image),
    values_path: path.join('.'),
  };
  // The chart's own image is the service's image; subchart and sidecar images are not.
  if (path.join('.') === 'image') attributes.image_tag = image.tag;
  if (tagFromAppVersion) {
    Object.assign(attributes, {
      ...(attributes.image_tag === undefined ? {} : { image_tag: chart.defaultTag }),
      tag: chart.defaultTag,
      tag_from_app_version: true,
      latest: chart.defaultTag === null,
    });
  }
  const e = evidence(file, doc.span(path), {
    source: 'cloud',
    provider: PROVIDER,
    kind: 'image-reference',
    subject: entityKey('service', owner),
    relationship: 'uses_image',
    object: imageKey(image),
    summary: `Helm values of chart ${chart.name} set ${path.join('.')} to image ${raw}${tagFromAppVersion ? ` (tag from the chart: ${chart.defaultTag ?? 'unset'})` : ''}`,
    attributes,
  });
  return [e];
}
