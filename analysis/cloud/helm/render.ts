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
import { basename } from '../../shared/paths';
import { parseYamlDocuments } from '../../shared/yaml';
import { LineWriter, execute, newContext, type Limits, DEFAULT_LIMITS } from './exec';
import { parseTemplate, type Node } from './parse';
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
}

interface ChartNode {
  dir: string;
  meta: Dict;
  values: Dict;
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
  const disabled = new Set<string>();
  const alternatives = new Map<string, string[]>();
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
  const releases = releaseNames(roots, [...byPath.values()]);
  const out: ChartRender[] = [];
  for (const root of [...charts].sort()) {
    if (parentOf(root) !== null) continue;
    const render: ChartRender = {
      root,
      rendered: [],
      gaps: [],
      handled: new Set(),
      release: '',
      releaseFound: releases.has(root),
      sources: [],
    };
    const tree = build(root, null, null);
    if (!tree) continue;
    renderTree(tree, render);
    out.push(render);
  }
  return out;

  function build(dir: string, parent: ChartNode | null, dep: Dict | null): ChartNode | null {
    const meta = yamlOf(dir ? `${dir}/Chart.yaml` : 'Chart.yaml');
    if (!isDict(meta)) return null;
    const defaults =
      valuesOf(dir ? `${dir}/values.yaml` : 'values.yaml') ??
      valuesOf(dir ? `${dir}/values.yml` : 'values.yml');
    const values: Dict = isDict(defaults) ? copy(defaults) : {};
    if (parent) {
      const key = String(dep?.alias ?? meta.name ?? basename(dir));
      const own = parent.values[key];
      if (isDict(own)) mergeInto(values, own, true);
      const global = isDict(values.global) ? values.global : {};
      values.global = mergeInto(
        global,
        isDict(parent.values.global) ? parent.values.global : {},
        true,
      );
      parent.values[key] = values;
    } else if (!isDict(values.global)) values.global = {};
    const node: ChartNode = { dir, meta, values, children: [] };
    const deps = Array.isArray(meta.dependencies) ? meta.dependencies.filter(isDict) : [];
    for (const sub of [...charts].sort()) {
      if (parentOf(sub) !== dir) continue;
      const subMeta = yamlOf(`${sub}/Chart.yaml`);
      const name = isDict(subMeta) ? subMeta.name : basename(sub);
      const d = deps.find((x) => x.name === name) ?? null;
      if (d && typeof d.condition === 'string' && !conditionHolds(values, d.condition)) {
        for (const [dir, list] of templates)
          if (dir === sub || dir.startsWith(`${sub}/`)) for (const f of list) disabled.add(f.path);
        continue;
      }
      const child = build(sub, node, d);
      if (child) node.children.push(child);
    }
    return node;
  }

  function renderTree(tree: ChartNode, render: ChartRender): void {
    for (const p of disabled) render.handled.add(p);
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
        try {
          const p = parseTemplate(f.text);
          for (const [k, v] of p.defines) defines.set(k, v);
          parsed.set(f.path, p.root);
        } catch (e) {
          render.gaps.push(gap(f.path, n, `does not parse: ${(e as Error).message}`));
        }
      }
    }
    const releaseName =
      releases.get(tree.dir) ?? String(tree.meta.name ?? (basename(tree.dir) || 'release'));
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
          render.gaps.push(gap(f.path, n, `${whyNot(e)}${otherValues(n.dir)}`));
        }
      }
    }
  }

  /** `; values files ... are not applied` when a chart ships values for other environments. */
  function otherValues(dir: string): string {
    let names = alternatives.get(dir);
    if (!names) {
      names = [...byPath.keys()]
        .filter(
          (p) =>
            (dir
              ? p.startsWith(`${dir}/`) && !p.slice(dir.length + 1).includes('/')
              : !p.includes('/')) && /^values[.-][^/]+\.ya?ml$/.test(basename(p)),
        )
        .map(basename)
        .sort();
      alternatives.set(dir, names);
    }
    return names.length
      ? `; the chart also ships ${names.slice(0, 5).join(', ')}, values for other environments, not applied`
      : '';
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

function whyNot(e: RenderError): string {
  switch (e.code) {
    case 'unknown_function':
      return `uses a template function the renderer does not support (${e.message})`;
    case 'unsupported':
      return `uses a construct the renderer does not support (${e.message})`;
    case 'limit':
      return `exceeds a rendering bound (${e.message})`;
    case 'required':
    case 'fail':
      return `does not render with the chart's default values (${e.message})`;
    default:
      return `fails to render (${e.message})`;
  }
}

function gap(path: string, n: ChartNode, why: string): AnalyzerGap {
  return {
    path,
    reason: 'helm_template_not_rendered',
    message: `Helm template of chart ${String(n.meta.name ?? n.dir)} ${why}; the resources it defines are not analyzed`,
  };
}
