/**
 * Renders Helm charts as `helm template <release> <dir>` would with the chart's own defaults:
 * values.yaml, subcharts under `charts/` (their values.yaml, the parent's `<name or alias>:` block
 * over it, `global` passed down, a dependency `condition` honoured), `.Release` (the name a
 * helmfile, Terraform or `helm install` in the repository gives it (./releases.ts), else the root
 * chart's name; namespace `default`), `.Chart`, `.Capabilities`, `.Files.Get` and `.Template`.
 * Named templates of a chart and its subcharts are shared, as in Helm. Each rendered file keeps,
 * per output line, the template line it came from. A template that cannot be rendered (an unknown
 * function, a construct outside the subset, a bound exceeded, `required`/`fail`) is a coverage gap
 * saying why; it is never rendered halfway.
 */
import { parseAllDocuments } from 'yaml';
import type { AnalyzerGap, SourceFile } from '../../evidence';
import { basename, joinPath } from '../../shared/paths';
import { parseYamlDocuments } from '../../shared/yaml';
import { LineWriter, execute, newContext, type Limits, DEFAULT_LIMITS } from './exec';
import { parseTemplate, type Node } from './parse';
import {
  helmDeployments,
  layered,
  leafOrigins,
  type HelmDeployment,
  type ValueOrigin,
} from './deployers';
import { releaseNames } from './releases';
import { Method, RenderError, copy, isDict, mergeInto, type Dict } from './values';

export interface RenderedTemplate {
  /** The template as written. */
  template: SourceFile;
  /** Its output: path of the template, rendered text. */
  rendered: SourceFile;
  /** Per rendered line (0-based), the template line (1-based) it came from; 0 when blank. */
  origins: number[];
}

export interface ChartRender {
  /** The root chart's folder. */
  root: string;
  rendered: RenderedTemplate[];
  gaps: AnalyzerGap[];
  /** Templates rendered or deliberately not (partials, a disabled subchart): no gap of their own. */
  handled: Set<string>;
  /** The release name rendered with. */
  release: string;
  /** Whether the release name came from the repository (else it is the renderer's choice). */
  releaseFound: boolean;
  /** The templates of the chart and its subcharts, as written. */
  sources: SourceFile[];
  /** The deployment rendered: a deployer's values, or null for the chart's own defaults. */
  deployment: HelmDeployment | null;
  /** Per template path, where each values path it may read is written (deployer or values.yaml). */
  origins: Map<string, Map<string, ValueOrigin>>;
  /** The chart's other deployments (other deployers, `values-<env>.yaml`), rendered apart. */
  variants: ChartRender[];
}

interface ChartNode {
  dir: string;
  meta: Dict;
  values: Dict;
  origins: Map<string, ValueOrigin>;
  children: ChartNode[];
}

const BUILTIN_APIS = new Set([
  'v1',
  'apps/v1',
  'batch/v1',
  'autoscaling/v1',
  'autoscaling/v2',
  'policy/v1',
  'networking.k8s.io/v1',
  'rbac.authorization.k8s.io/v1',
  'storage.k8s.io/v1',
  'apiextensions.k8s.io/v1',
  'admissionregistration.k8s.io/v1',
  'coordination.k8s.io/v1',
  'discovery.k8s.io/v1',
  'scheduling.k8s.io/v1',
  'certificates.k8s.io/v1',
]);

/** Deployments of one chart rendered besides the primary: a bound on a repository of many. */
const MAX_VARIANTS = 12;

const KUBE = { Version: 'v1.30.0', GitVersion: 'v1.30.0', Major: '1', Minor: '30' };

/**
 * Renders every root chart. `templates` are the files of each chart's templates folder (by chart
 * folder); `files` every audited file by path (Chart.yaml, values.yaml, `.Files.Get`).
 */
export function renderCharts(
  charts: Set<string>,
  templates: Map<string, SourceFile[]>,
  files: Map<string, SourceFile>,
  limits: Limits = DEFAULT_LIMITS,
): ChartRender[] {
  const byPath = files;
  const parentOf = (dir: string): string | null => {
    const m = /^(?:(.*)\/)?charts\/[^/]+$/.exec(dir);
    const parent = m ? (m[1] ?? '') : null;
    return parent !== null && charts.has(parent) ? parent : null;
  };
  const yamlOf = (path: string): unknown => {
    const f = byPath.get(path);
    return f ? parseYamlDocuments(f).docs[0]?.value : undefined;
  };
  // Values as Helm reads them: a repeated key is allowed, the last one wins.
  const valuesOf = (path: string): unknown => {
    const f = byPath.get(path);
    if (!f) return undefined;
    try {
      const doc = parseAllDocuments(f.text, { uniqueKeys: false, merge: true });
      const first = Array.isArray(doc) ? doc[0] : undefined;
      if (!first || first.errors.length) return undefined;
      return first.toJS({ maxAliasCount: 100 }) as unknown;
    } catch {
      return undefined;
    }
  };
  const templatesOf = (dir: string) => templates.get(dir) ?? [];
  const roots = new Map<string, string>();
  for (const root of [...charts].sort()) {
    const meta =
      parentOf(root) === null ? yamlOf(root ? `${root}/Chart.yaml` : 'Chart.yaml') : null;
    if (isDict(meta)) roots.set(root, String(meta.name ?? (basename(root) || 'release')));
  }
  const { deployments, gaps: deployerGaps } = helmDeployments(roots, byPath);
  // A chart an umbrella chart names as a `file://` dependency is rendered as part of it, unless a
  // deployer installs it by itself.
  const deployed = new Set(deployments.filter((d) => d.via !== 'values-file').map((d) => d.chart));
  const localDeps = new Set<string>();
  for (const root of roots.keys())
    for (const d of localDependencies(root))
      if (d.dir !== root && !deployed.has(d.dir)) localDeps.add(d.dir);
  const releases = releaseNames(roots, [...byPath.values()]);
  const out: ChartRender[] = [];
  for (const root of [...roots.keys()].sort()) {
    if (localDeps.has(root)) continue;
    const mine = deployments.filter((d) => d.chart === root);
    const byDeployer = mine.filter((d) => d.via !== 'values-file');
    const primary = byDeployer[0] ?? null;
    const render = renderChart(root, primary, primary?.release ?? releases.get(root) ?? null);
    if (!render) continue;
    render.releaseFound = render.releaseFound || releases.has(root);
    const others = mine.filter((d) => d !== primary);
    for (const d of others.slice(0, MAX_VARIANTS)) {
      const variant = renderChart(root, d, render.release);
      if (variant) render.variants.push(variant);
    }
    if (others.length > MAX_VARIANTS)
      deployerGaps.push({
        path: others[MAX_VARIANTS]!.at.path,
        reason: 'helm_variants_not_rendered',
        message: `chart ${root || '.'} has ${others.length + 1} deployments (deployers and values files); only ${MAX_VARIANTS + 1} are rendered, the others (${others
          .slice(MAX_VARIANTS, MAX_VARIANTS + 5)
          .map((d) => d.label)
          .join(', ')}${others.length > MAX_VARIANTS + 5 ? ', ...' : ''}) are not compared`,
      });
    out.push(render);
  }
  if (deployerGaps.length) out.push({ ...emptyRender(''), gaps: deployerGaps });
  return out;

  function emptyRender(root: string): ChartRender {
    return {
      root,
      rendered: [],
      gaps: [],
      handled: new Set(),
      release: '',
      releaseFound: false,
      sources: [],
      deployment: null,
      origins: new Map(),
      variants: [],
    };
  }

  function renderChart(
    root: string,
    deployment: HelmDeployment | null,
    release: string | null,
  ): ChartRender | null {
    const render = { ...emptyRender(root), deployment, releaseFound: release !== null };
    const disabled = new Set<string>();
    const tree = build(root, null, null, deployment, disabled, 0);
    if (!tree) return null;
    for (const p of disabled) render.handled.add(p);
    renderTree(tree, render, release);
    return render;
  }

  /** The `file://` dependencies of a chart that are charts of the repository. */
  function localDependencies(dir: string): { dir: string; dep: Dict }[] {
    const meta = yamlOf(dir ? `${dir}/Chart.yaml` : 'Chart.yaml');
    const deps = isDict(meta) && Array.isArray(meta.dependencies) ? meta.dependencies : [];
    const out: { dir: string; dep: Dict }[] = [];
    for (const d of deps) {
      if (!isDict(d) || typeof d.repository !== 'string' || !d.repository.startsWith('file://'))
        continue;
      const sub = joinPath(dir, d.repository.slice('file://'.length).replace(/\/$/, ''));
      if (sub !== null && charts.has(sub)) out.push({ dir: sub, dep: d });
    }
    return out;
  }

  /** The values a chart's own values.yaml writes, each leaf with its line. */
  function ownOrigins(dir: string): Map<string, ValueOrigin> {
    for (const name of ['values.yaml', 'values.yml']) {
      const f = byPath.get(dir ? `${dir}/${name}` : name);
      const doc = f ? parseYamlDocuments(f).docs[0] : undefined;
      if (f && doc && isDict(doc.value)) return leafOrigins(f.path, doc.value, doc.span);
    }
    return new Map();
  }

  function build(
    dir: string,
    parent: ChartNode | null,
    dep: Dict | null,
    deployment: HelmDeployment | null,
    disabled: Set<string>,
    depth: number,
  ): ChartNode | null {
    const meta = yamlOf(dir ? `${dir}/Chart.yaml` : 'Chart.yaml');
    if (!isDict(meta) || depth > 20) return null;
    const defaults =
      valuesOf(dir ? `${dir}/values.yaml` : 'values.yaml') ??
      valuesOf(dir ? `${dir}/values.yml` : 'values.yml');
    let values: Dict = isDict(defaults) ? copy(defaults) : {};
    const origins = ownOrigins(dir);
    if (parent) {
      const key = String(dep?.alias ?? meta.name ?? basename(dir));
      const own = parent.values[key];
      if (isDict(own)) mergeInto(values, own, true);
      for (const [k, o] of parent.origins) {
        if (k.startsWith(`${key}.`)) origins.set(k.slice(key.length + 1), o);
        else if (k.startsWith('global.')) origins.set(k, o);
      }
      const global = isDict(values.global) ? values.global : {};
      values.global = mergeInto(
        global,
        isDict(parent.values.global) ? parent.values.global : {},
        true,
      );
      parent.values[key] = values;
    } else {
      if (deployment) {
        const l = layered(values, deployment.layers);
        values = l.values;
        for (const [k, o] of l.origins) origins.set(k, o);
      }
      if (!isDict(values.global)) values.global = {};
    }
    const node: ChartNode = { dir, meta, values, origins, children: [] };
    const deps = Array.isArray(meta.dependencies) ? meta.dependencies.filter(isDict) : [];
    const subs: { dir: string; dep: Dict | null }[] = [];
    for (const sub of [...charts].sort()) {
      if (parentOf(sub) !== dir) continue;
      const subMeta = yamlOf(`${sub}/Chart.yaml`);
      const name = isDict(subMeta) ? subMeta.name : basename(sub);
      subs.push({ dir: sub, dep: deps.find((x) => x.name === name) ?? null });
    }
    // Umbrella charts: `repository: file://../x` names a chart of the repository.
    for (const d of localDependencies(dir)) if (!subs.some((s) => s.dir === d.dir)) subs.push(d);
    for (const { dir: sub, dep: d } of subs) {
      if (d && typeof d.condition === 'string' && !conditionHolds(values, d.condition)) {
        for (const [dir, list] of templates)
          if (dir === sub || dir.startsWith(`${sub}/`)) for (const f of list) disabled.add(f.path);
        continue;
      }
      const child = build(sub, node, d, null, disabled, depth + 1);
      if (child) node.children.push(child);
    }
    return node;
  }

  function renderTree(tree: ChartNode, render: ChartRender, release: string | null): void {
    const nodes: ChartNode[] = [];
    const walk = (n: ChartNode) => {
      for (const c of n.children) walk(c);
      nodes.push(n);
    };
    walk(tree);
    // Named templates: subcharts' first, the parent's over them.
    const defines = new Map<string, Node[]>();
    const parsed = new Map<string, Node[]>();
    for (const n of nodes) {
      for (const f of templatesOf(n.dir)) {
        render.sources.push(f);
        render.origins.set(f.path, n.origins);
        try {
          const p = parseTemplate(f.text);
          for (const [k, v] of p.defines) defines.set(k, v);
          parsed.set(f.path, p.root);
        } catch (e) {
          render.gaps.push(gap(f.path, n, `does not parse: ${(e as Error).message}`));
        }
      }
    }
    const releaseName = release ?? String(tree.meta.name ?? (basename(tree.dir) || 'release'));
    render.release = releaseName;
    for (const n of nodes) {
      for (const f of templatesOf(n.dir)) {
        const root = parsed.get(f.path);
        const name = basename(f.path);
        if (!root) continue;
        if (
          name.startsWith('_') ||
          !/\.(ya?ml|json)$/i.test(name) ||
          f.path.startsWith(`${n.dir ? `${n.dir}/` : ''}templates/tests/`)
        ) {
          // Partials hold named templates only; NOTES.txt and other files are not manifests;
          // `templates/tests/` are `helm test` pods, not part of the release.
          render.handled.add(f.path);
          continue;
        }
        const ctx = newContext(defines, limits);
        const w = new LineWriter(limits.output);
        try {
          execute(ctx, root, topLevel(n, releaseName, f.path), w);
          const { text, origins } = w.result();
          render.rendered.push({ template: f, rendered: { path: f.path, text }, origins });
          render.handled.add(f.path);
        } catch (e) {
          if (!(e instanceof RenderError)) throw e;
          render.gaps.push(gap(f.path, n, whyNot(e, render.deployment), render.deployment));
        }
      }
    }
  }

  function topLevel(n: ChartNode, releaseName: string, path: string): Dict {
    const chartDir = n.dir;
    const meta = n.meta;
    const chart: Dict = {};
    for (const [k, v] of Object.entries(meta)) chart[k[0]!.toUpperCase() + k.slice(1)] = v;
    chart.APIVersion = meta.apiVersion ?? 'v2';
    const rel = chartDir ? path.slice(chartDir.length + 1) : path;
    return {
      Values: n.values,
      Chart: chart,
      Release: {
        Name: releaseName,
        Namespace: 'default',
        Service: 'Helm',
        IsInstall: true,
        IsUpgrade: false,
        Revision: 1,
      },
      Capabilities: {
        KubeVersion: KUBE,
        APIVersions: { Has: new Method('APIVersions.Has', (a) => BUILTIN_APIS.has(String(a[0]))) },
        HelmVersion: { Version: 'v3.16.0' },
      },
      Template: {
        Name: `${String(meta.name ?? '')}/${rel}`,
        BasePath: `${String(meta.name ?? '')}/templates`,
      },
      Files: {
        Get: new Method('Files.Get', (a) => {
          const p = chartDir ? `${chartDir}/${String(a[0])}` : String(a[0]);
          const f = byPath.get(p);
          if (!f)
            throw new RenderError(
              'unsupported',
              `.Files.Get of ${String(a[0])}: file not among the audited files`,
            );
          return f.text;
        }),
      },
    };
  }
}

function conditionHolds(values: Dict, condition: string): boolean {
  // The first path of `a.enabled,b.enabled` that is set decides; none set: enabled.
  for (const path of condition.split(',').map((s) => s.trim())) {
    let v: unknown = values;
    for (const k of path.split('.')) v = isDict(v) ? v[k] : undefined;
    if (typeof v === 'boolean') return v;
  }
  return true;
}

function whyNot(e: RenderError, deployment: HelmDeployment | null): string {
  switch (e.code) {
    case 'unknown_function':
      return `uses a template function the renderer does not support (${e.message})`;
    case 'unsupported':
      return `uses a construct the renderer does not support (${e.message})`;
    case 'limit':
      return `exceeds a rendering bound (${e.message})`;
    case 'required':
    case 'fail':
      return `does not render with ${deployment ? 'these' : "the chart's default"} values (${e.message})`;
    default:
      return `fails to render (${e.message})`;
  }
}

function gap(
  path: string,
  n: ChartNode,
  why: string,
  deployment: HelmDeployment | null = null,
): AnalyzerGap {
  const values = deployment ? ` with the values of ${deployment.label}` : '';
  return {
    path,
    reason: 'helm_template_not_rendered',
    message: `Helm template of chart ${String(n.meta.name ?? n.dir)}${values} ${why}; the resources it defines are not analyzed`,
  };
}
