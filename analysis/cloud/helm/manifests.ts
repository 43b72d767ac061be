/**
 * Rendered Helm templates read as Kubernetes manifests: each root chart (with its subcharts) is
 * one cluster for the Kubernetes analyzer, so its Services, workloads and ConfigMaps resolve
 * together. Evidence is moved back onto the template: the lines cited are the template lines the
 * rendered object came from, hashed from the template as written, so every citation verifies
 * against the repository.
 */
import {
  cite,
  normalizeName,
  type AnalyzerGap,
  type Evidence,
  type SourceFile,
} from '../../evidence';
import type { BuiltEngine } from '../built-images';
import { analyzeKubernetes } from '../kubernetes';
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
  for (const render of renderCharts(charts, templates, files)) {
    for (const g of render.gaps) {
      out.gaps.push(g);
      out.gapPaths.add(g.path);
    }
    for (const p of render.handled) out.handled.add(p);
    const list = render.rendered.filter((r) => !definesNothing(r.rendered.text));
    if (!list.length) continue;
    const byPath = new Map<string, RenderedTemplate>(list.map((r) => [r.rendered.path, r]));
    const rekey = renamer(render);
    const k8s = analyzeKubernetes(
      list.map((r) => r.rendered),
      [],
      built,
    );
    for (const e of k8s.evidence) {
      const r = byPath.get(e.location.path);
      out.evidence.push(r ? onTemplate(e, r, render.root, rekey) : e);
    }
    for (const g of k8s.gaps) {
      out.gaps.push({
        ...g,
        message: `rendered with the chart's default values, ${g.message.replace(/line (\d+)/, (_m, n: string) => `line ${n} of the output (template line ${byPath.get(g.path)?.origins[Number(n) - 1] ?? '?'})`)}`,
      });
      out.gapPaths.add(g.path);
    }
  }
  return out;
}

/** The evidence cited at the template lines its rendered lines came from. */
function onTemplate(
  e: Evidence,
  r: RenderedTemplate,
  chart: string,
  rekey: (key: string | null) => string | null,
): Evidence {
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
  return cite(r.template, from, to, {
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
