/**
 * Rendered Helm templates read as Kubernetes manifests: each root chart (with its subcharts) is
 * one cluster for the Kubernetes analyzer, so its Services, workloads and ConfigMaps resolve
 * together. Evidence is moved back onto the template: the lines cited are the template lines the
 * rendered object came from, hashed from the template as written, so every citation verifies
 * against the repository.
 */
import { cite, type AnalyzerGap, type Evidence, type SourceFile } from '../../evidence';
import type { BuiltEngine } from '../built-images';
import { analyzeKubernetes } from '../kubernetes';
import { renderCharts, type RenderedTemplate } from './render';

export interface RenderedOutput {
  evidence: Evidence[];
  gaps: AnalyzerGap[];
  /** Templates rendered (or partials, or of a disabled subchart): no other gap for them. */
  handled: Set<string>;
  /** Templates that got a gap here. */
  gapPaths: Set<string>;
}

/** A rendered file with no document but comments and separators defines nothing. */
function definesNothing(text: string): boolean {
  return text.split('\n').every((l) => /^\s*(#.*)?$/.test(l) || /^---\s*$/.test(l));
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
    const k8s = analyzeKubernetes(
      list.map((r) => r.rendered),
      [],
      built,
    );
    for (const e of k8s.evidence) {
      const r = byPath.get(e.location.path);
      out.evidence.push(r ? onTemplate(e, r, render.root) : e);
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
function onTemplate(e: Evidence, r: RenderedTemplate, chart: string): Evidence {
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
  return cite(r.template, from, to, {
    source_type: e.source_type,
    provider: e.provider,
    evidence_kind: e.evidence_kind,
    subject_key: e.subject_key,
    relationship_kind: e.relationship_kind,
    object_key: e.object_key,
    summary: e.summary,
    attributes: { ...e.attributes, rendered_from: 'helm', helm_chart: chart || '.' },
  });
}
