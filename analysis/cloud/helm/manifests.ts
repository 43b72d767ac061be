/**
 * Rendered Helm templates read as Kubernetes manifests: each root chart (with its subcharts) is
 * one cluster for the Kubernetes analyzer, so its Services, workloads and ConfigMaps resolve
 * together. Evidence is moved back onto the template: the lines cited are the template lines the
 * rendered object came from, hashed from the template as written, so every citation verifies
 * against the repository.
 */
import {
  cite,
  entityKey,
  normalizeName,
  type AnalyzerGap,
  type Evidence,
  type SourceFile,
} from '../../evidence';
import type { BuiltEngine } from '../built-images';
import { analyzeKubernetes } from '../kubernetes';
import { uniqueSorted } from '../../shared/text';
import type { ValueOrigin } from './deployers';
import { renderCharts, type ChartRender, type RenderedTemplate } from './render';

export interface RenderedOutput {
  evidence: Evidence[];
  gaps: AnalyzerGap[];
  /** Templates rendered (or partials, or of a disabled subchart): no other gap for them. */
  handled: Set<string>;
  /** Templates that got a gap here. */
  gapPaths: Set<string>;
}

/**
 * A rendered file with no document but comments and separators defines nothing; one that is a
 * `helm test` hook is not installed with the release.
 */
function definesNothing(text: string): boolean {
  return (
    text.split('\n').every((l) => /^\s*(#.*)?$/.test(l) || /^---\s*$/.test(l)) ||
    /["']?helm\.sh\/hook["']?\s*:\s*["']?test(-success)?["']?\s*$/m.test(text)
  );
}

/**
 * The release name is the renderer's choice, not the system's: a name made from it drops it
 * (`<release>-x` is `x`, `x-<release>...` is `x`); the chart's own `<release>` stays.
 */
export function withoutRelease(name: string, release: string): string {
  if (!release || name === release) return name;
  if (name.startsWith(`${release}-`)) return name.slice(release.length + 1) || name;
  const at = name.indexOf(`-${release}`);
  if (at > 0) {
    const after = name[at + release.length + 1];
    if (after === undefined || after === '-' || after === '.') return name.slice(0, at);
  }
  return name;
}

/**
 * Entity keys without the renderer's release name: only when the repository does not name the
 * release, and only for names the templates do not write out literally.
 */
function renamer(render: ChartRender): (key: string | null) => string | null {
  if (render.releaseFound) return (key) => key;
  const release = normalizeName(render.release);
  const text = render.sources.map((f) => f.text.toLowerCase()).join('\n');
  const literal = new Map<string, boolean>();
  return (key) => {
    if (key === null) return null;
    const at = key.indexOf(':');
    const name = key.slice(at + 1);
    const bare = withoutRelease(name, release);
    if (bare === name) return key;
    let written = literal.get(name);
    if (written === undefined) literal.set(name, (written = text.includes(name)));
    return written ? key : `${key.slice(0, at + 1)}${bare}`;
  };
}

export function renderedEvidence(
  charts: Set<string>,
  templates: Map<string, SourceFile[]>,
  all: SourceFile[],
  built?: BuiltEngine,
): RenderedOutput {
  const out: RenderedOutput = { evidence: [], gaps: [], handled: new Set(), gapPaths: new Set() };
  const files = new Map(all.map((f) => [f.path, f]));
  for (const first of renderCharts(charts, templates, files)) {
    const all = [first, ...first.variants];
    const reads = all.map((r) => readRender(r, files, built));
    const counts = reads.map((r) => edgesOf(r.evidence).length);
    // Several deployers: the most complete deployment is the graph (a guess, said so).
    const deployers = all.flatMap((r, i) =>
      r.deployment && r.deployment.via !== 'values-file' ? [i] : [],
    );
    let pick = deployers.reduce((best, i) => (counts[i]! > counts[best]! ? i : best), 0);
    // No deployer, and the chart's defaults leave templates unrendered that a values file renders
    // (`# use -f values-prod.yaml`): the defaults are no deployment; the most complete values
    // file is the graph, a guess.
    const size = (i: number) => all[i]!.rendered.length * 1000 + counts[i]!;
    let unusable = false;
    if (!deployers.length && all.length > 1) {
      const best = all.reduce((b, _r, i) => (size(i) > size(b) ? i : b), 0);
      if (all[best]!.rendered.length > first.rendered.length) [pick, unusable] = [best, true];
    }
    const primary = all[pick]!;
    const others = all.filter((_, i) => i !== pick);
    for (const r of all) for (const p of r.handled) out.handled.add(p);
    const names = others.map((v) => v.deployment?.label ?? `${v.root || '.'} (values.yaml)`);
    for (const g of [...primary.gaps, ...reads[pick]!.gaps]) {
      out.gaps.push(
        names.length
          ? {
              ...g,
              message: `${g.message}; the chart's other deployments (${names.slice(0, 5).join(', ')}) are rendered apart, as deployment variants`,
            }
          : g,
      );
      out.gapPaths.add(g.path);
    }
    for (const e of reads[pick]!.evidence) out.evidence.push(e);
    const choice = variantRecord(
      primary,
      others.map((r) => ({ render: r, evidence: reads[all.indexOf(r)]!.evidence })),
      reads[pick]!.evidence,
      files,
      unusable ? 'defaults-unusable' : deployers.length > 1 ? 'several' : 'one',
    );
    if (choice) out.evidence.push(choice);
  }
  return out;
}

/** The rendered templates of one deployment read as Kubernetes manifests, cited on the templates. */
function readRender(
  render: ChartRender,
  files: Map<string, SourceFile>,
  built?: BuiltEngine,
): { evidence: Evidence[]; gaps: AnalyzerGap[] } {
  const list = render.rendered.filter((r) => !definesNothing(r.rendered.text));
  if (!list.length) return { evidence: [], gaps: [] };
  const byPath = new Map<string, RenderedTemplate>(list.map((r) => [r.rendered.path, r]));
  const rekey = renamer(render);
  const k8s = analyzeKubernetes(
    list.map((r) => r.rendered),
    [],
    built,
  );
  const evidence = k8s.evidence.map((e) => {
    const r = byPath.get(e.location.path);
    return r ? onTemplate(e, r, render, rekey, files) : e;
  });
  const values = render.deployment
    ? `the values of ${render.deployment.label}`
    : "the chart's default values";
  const gaps = k8s.gaps.map((g) => ({
    ...g,
    message: `rendered with ${values}, ${g.message.replace(/line (\d+)/, (_m, n: string) => `line ${n} of the output (template line ${byPath.get(g.path)?.origins[Number(n) - 1] ?? '?'})`)}`,
  }));
  return { evidence, gaps };
}

const GRAPH_KEY = /^(service|datastore|queue|bucket|external|ingress|job):/;

function edgesOf(evidence: Evidence[]): string[] {
  return uniqueSorted(
    evidence
      .filter(
        (e) => e.object_key && GRAPH_KEY.test(e.object_key) && e.relationship_kind !== 'uses_image',
      )
      .map((e) => `${e.subject_key} -> ${e.object_key}`),
  );
}

/**
 * A chart deployed several ways (deployers with their own values, `values-<env>.yaml` files) is
 * one set of deployment variants: the graph holds the primary (the deployer's values, else the
 * chart's defaults); each other variant is rendered apart and only the edges it alone would give
 * are named, in a `deployment-variants` record that reconcile turns into a variant choice.
 */
function variantRecord(
  render: ChartRender,
  variants: { render: ChartRender; evidence: Evidence[] }[],
  primary: Evidence[],
  files: Map<string, SourceFile>,
  choice: 'one' | 'several' | 'defaults-unusable',
): Evidence | null {
  if (!variants.length) return null;
  const chartFile = files.get(render.root ? `${render.root}/Chart.yaml` : 'Chart.yaml');
  if (!chartFile) return null;
  const own = new Set(edgesOf(primary));
  const dropped = uniqueSorted(variants.flatMap((v) => edgesOf(v.evidence))).filter(
    (e) => !own.has(e),
  );
  const d = render.deployment;
  const primaryName = d ? d.label : `${render.root || '.'} (values.yaml)`;
  const others = variants.map(
    (v) => v.render.deployment?.label ?? `${render.root || '.'} (values.yaml)`,
  );
  const guessed = choice !== 'one';
  const why = !d
    ? "no deployer in the repository passes values to it; the chart's own values.yaml is what `helm install` applies"
    : choice === 'defaults-unusable'
      ? `no deployer in the repository passes values to it and the chart's own values.yaml leaves templates unrendered; the values file that renders the most (${d.label}, ${render.rendered.length} template(s), ${own.size} edge(s)) was chosen, a guess`
      : guessed
        ? `several deployers install it with different values; the most complete (${d.label}, ${own.size} edge(s)) was chosen, a guess`
        : `${d.label} installs it`;
  const shown = dropped.slice(0, 20).join('; ');
  const detail = `helm deployment variants of chart ${render.root || '.'}: ${[primaryName, ...others].join(', ')}. The graph is built from ${primaryName}: ${why}. Edges only the other variant(s) declare are left out${dropped.length ? ` (${dropped.length}: ${shown}${dropped.length > 20 ? '; ...' : ''})` : ' (none differ)'}.`;
  const line = chartFile.text.split('\n').findIndex((l) => /^name\s*:/.test(l)) + 1 || 1;
  return cite(chartFile, line, line, {
    source_type: 'cloud',
    provider: 'helm',
    evidence_kind: 'deployment-variants',
    subject_key: entityKey('deployment', `helm-${render.root || 'root'}`),
    relationship_kind: null,
    object_key: null,
    summary: `Helm chart ${render.root || '.'} has ${variants.length + 1} deployment variants; the graph is built from ${primaryName}`,
    attributes: {
      family: 'helm',
      primary: d ? d.at.path : render.root || '.',
      primary_label: primaryName,
      others,
      chosen_by: !d
        ? 'chart-defaults'
        : choice === 'defaults-unusable'
          ? 'most-complete'
          : 'deploy-step',
      guessed,
      dropped_edges: dropped,
      detail,
    },
  });
}

/** The evidence cited at the template lines its rendered lines came from. */
function onTemplate(
  e: Evidence,
  r: RenderedTemplate,
  render: ChartRender,
  rekey: (key: string | null) => string | null,
  files: Map<string, SourceFile>,
): Evidence {
  const chart = render.root;
  const { start_line: s, end_line: end } = e.location;
  const lines: number[] = [];
  for (let i = s; i <= end; i++) {
    const o = r.origins[i - 1];
    if (o) lines.push(o);
  }
  if (!lines.length) {
    // A blank cited line: the nearest line above that came from the template.
    for (let i = s - 1; i >= 1 && !lines.length; i--)
      if (r.origins[i - 1]) lines.push(r.origins[i - 1]!);
  }
  let from = lines.length ? lines[0]! : 1;
  let to = from;
  for (const l of lines) {
    if (l < from) from = l;
    if (l > to) to = l;
  }
  const subject = rekey(e.subject_key) ?? e.subject_key;
  const attributes: Record<string, unknown> = {
    ...e.attributes,
    rendered_from: 'helm',
    helm_chart: chart || '.',
  };
  if (typeof attributes.service_key === 'string')
    attributes.service_key = rekey(attributes.service_key);
  if (subject !== e.subject_key && e.evidence_kind === 'workload-declared') {
    const was = e.subject_key.slice(e.subject_key.indexOf(':') + 1);
    attributes.aliases = [...(Array.isArray(attributes.aliases) ? attributes.aliases : []), was];
  }
  // A secret value the template line does not write out comes from values or a function at
  // install: a default to override, not a value committed in the template.
  if (
    e.evidence_kind === 'literal-secret' &&
    attributes.placeholder === undefined &&
    r.template.text
      .split('\n')
      .slice(from - 1, to)
      .some((l) => l.includes('{{'))
  )
    attributes.placeholder = "templated: set from the chart's values at install";
  // The values the cited template lines read, where each is written; a short citation of an edge
  // whose value a deployer passes cites the deployer's line (the template lines stay attributes).
  const used = valuesUsed(r.template, from, to, render.origins.get(r.template.path));
  if (used.length) attributes.values_from = used;
  const passed = used.find((u) => u.deployer);
  const at = passed && e.object_key !== null && to - from <= 4 ? files.get(passed.path) : undefined;
  if (passed && at) attributes.template = { path: r.template.path, start_line: from, end_line: to };
  return cite(at ?? r.template, at ? passed!.line : from, at ? passed!.line : to, {
    source_type: e.source_type,
    provider: e.provider,
    evidence_kind: e.evidence_kind,
    subject_key: subject,
    relationship_kind: e.relationship_kind,
    object_key: rekey(e.object_key),
    summary: e.summary,
    attributes,
  });
}

/** The `.Values.x.y` paths a template's lines `from..to` read, with where each value is written. */
function valuesUsed(
  template: SourceFile,
  from: number,
  to: number,
  origins: Map<string, ValueOrigin> | undefined,
): (ValueOrigin & { values_path: string })[] {
  if (!origins?.size) return [];
  const text = template.text
    .split('\n')
    .slice(from - 1, to)
    .join('\n');
  const out: (ValueOrigin & { values_path: string })[] = [];
  for (const m of text.matchAll(/\.Values\.([\w.]+)/g)) {
    const o = origins.get(m[1]!);
    if (o && !out.some((x) => x.values_path === m[1])) out.push({ values_path: m[1]!, ...o });
    if (out.length >= 10) break;
  }
  return out;
}
