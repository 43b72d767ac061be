/**
 * What deployers pass to a chart of the repository (issue 23): the values a helmfile release
 * (`values:` files and inline maps, `set:`), a Terraform `helm_release` (`values = [file(...)]`,
 * `set { name value }`), an Argo CD Application or ApplicationSet (`helm.valueFiles`, `values`,
 * `valuesObject`, `parameters`) or a Skaffold release (`valuesFiles`, `setValues`, `overrides`)
 * layers over the chart's values.yaml, and the chart's own `values-<env>.yaml` files (each a
 * deployment variant of the chart). Every value keeps where it is written (file and line), so
 * evidence can cite the deployer's line. A values file a deployer names that cannot be read (a
 * template, a file not among the audited ones, YAML that does not parse) is a coverage gap.
 * Only charts of the repository named by a local path count: `chart: bitnami/redis` is not ours.
 */
import type { AnalyzerGap, SourceFile } from '../../evidence';
import { basename, dirname, joinPath } from '../../shared/paths';
import { compareStrings } from '../../shared/text';
import { parseYamlDocuments, type PathItem, type YamlDoc } from '../../shared/yaml';
import { topLevelBlocks } from '../hcl-text';
import { isDict, mergeInto, type Dict } from './values';

/** Where a value is written. */
export interface ValueOrigin {
  path: string;
  line: number;
  /** Set when a deployer (or a `values-<env>.yaml` variant) passes it, not the chart's defaults. */
  deployer?: true;
}

/** One values layer: the values and, per dotted path of a leaf, where it is written. */
export interface ValuesLayer {
  values: Dict;
  origins: Map<string, ValueOrigin>;
}

export type DeployerKind = 'helmfile' | 'terraform' | 'argocd' | 'skaffold' | 'values-file';

/** One way the repository installs a chart: its values over the chart's defaults. */
export interface HelmDeployment {
  /** The chart's folder. */
  chart: string;
  release: string | null;
  via: DeployerKind;
  /** The deployer's entry (or the values file of a `values-<env>.yaml` variant). */
  at: ValueOrigin;
  /** A name for people: `helmfile.yaml release cart`, `values-prod.yaml`. */
  label: string;
  /** Applied over the chart's values.yaml, in order. */
  layers: ValuesLayer[];
}

export interface Deployments {
  deployments: HelmDeployment[];
  gaps: AnalyzerGap[];
}

/** Leaves recorded per layer: a bound on a hostile values file. */
const MAX_ORIGINS = 5000;
const HELMFILE =
  /(^|\/)helmfile(\.[\w-]+)*\.ya?ml(\.gotmpl)?$|(^|\/)helmfile\.d\/[^/]+\.ya?ml(\.gotmpl)?$/;
const ENV_VALUES = /^values[.-][\w.-]+\.ya?ml$/;

/** Where each leaf of `value` is written: `span` gives the lines of a path below it. */
export function leafOrigins(
  path: string,
  value: Dict,
  span: (p: PathItem[]) => { start: number },
): Map<string, ValueOrigin> {
  const origins = new Map<string, ValueOrigin>();
  const walk = (v: unknown, p: string[]) => {
    if (origins.size >= MAX_ORIGINS) return;
    if (isDict(v) && Object.keys(v).length) {
      for (const [k, x] of Object.entries(v)) walk(x, [...p, k]);
      return;
    }
    if (p.length) origins.set(p.join('.'), { path, line: span(p).start });
  };
  walk(value, []);
  return origins;
}

/** A layer from a parsed YAML node: `at` is the node's path in `doc`. */
function layerOf(path: string, doc: YamlDoc, value: unknown, at: PathItem[]): ValuesLayer | null {
  if (!isDict(value)) return null;
  return { values: value, origins: leafOrigins(path, value, (p) => doc.span([...at, ...p])) };
}

/** Helm's `--set a.b=c` value typing: booleans, integers and null, else a string. */
function setValue(raw: string): unknown {
  if (raw === 'true' || raw === 'false') return raw === 'true';
  if (raw === 'null') return null;
  if (/^-?(0|[1-9]\d{0,15})$/.test(raw)) return Number(raw);
  return raw;
}

/** A layer of `set` entries (`a.b` with `\.` escapes); list indexes (`a[0]`) are not applied. */
function setLayer(entries: { name: string; value: unknown; origin: ValueOrigin }[]): ValuesLayer {
  const values: Dict = {};
  const origins = new Map<string, ValueOrigin>();
  for (const { name, value, origin } of entries) {
    if (name.includes('[')) continue;
    const keys = name.split(/(?<!\\)\./).map((k) => k.replace(/\\\./g, '.'));
    let cur = values;
    keys.slice(0, -1).forEach((k) => {
      if (!isDict(cur[k])) cur[k] = {};
      cur = cur[k] as Dict;
    });
    cur[keys[keys.length - 1]!] = typeof value === 'string' ? setValue(value) : value;
    origins.set(keys.join('.'), origin);
  }
  return { values, origins };
}

class Reader {
  readonly gaps: AnalyzerGap[] = [];
  constructor(
    private readonly files: Map<string, SourceFile>,
    private readonly charts: Set<string>,
  ) {}

  /** The chart folder a local reference names, or null (a repository chart, OCI, a URL). */
  chart(base: string, ref: unknown): string | null {
    if (typeof ref !== 'string' || ref === '' || /^(oci|https?|git):/.test(ref)) return null;
    const dir = joinPath(base, ref.replace(/^file:\/\//, '').replace(/\/$/, ''));
    return dir !== null && this.charts.has(dir) ? dir : null;
  }

  /** A values file a deployer names, or a gap saying why it is not applied. */
  file(from: SourceFile, base: string, ref: string): ValuesLayer | null {
    const path = joinPath(base, ref.replace(/^\$\{path\.(module|root|cwd)\}\//, ''));
    const f = path === null ? undefined : this.files.get(path);
    const gap = (why: string) => {
      this.gaps.push({
        path: from.path,
        reason: 'helm_values_not_read',
        message: `values file ${ref.slice(0, 200)} named here ${why}; the chart is rendered without it`,
      });
      return null;
    };
    if (!f) return gap('is not among the audited files');
    if (/\{\{|\$\{/.test(f.text))
      return gap("is a template (it is rendered by the deployer, with the deployer's environment)");
    const y = parseYamlDocuments(f);
    if (y.errors.length) return gap(`does not parse (${y.errors[0]})`);
    const doc = y.docs[0];
    return doc ? (layerOf(f.path, doc, doc.value, []) ?? { values: {}, origins: new Map() }) : null;
  }
}

/** Every deployment of a chart of `charts` (folder -> name) that the files show. */
export function helmDeployments(
  charts: Map<string, string>,
  files: Map<string, SourceFile>,
): Deployments {
  const r = new Reader(files, new Set(charts.keys()));
  const out: HelmDeployment[] = [];
  for (const f of [...files.values()].sort((a, b) => compareStrings(a.path, b.path))) {
    if (HELMFILE.test(f.path)) out.push(...helmfile(r, f));
    else if (/\.tf$/.test(f.path) && f.text.includes('helm_release')) out.push(...terraform(r, f));
    else if (/\.ya?ml$/.test(f.path) && /^\s*kind:\s*["']?Application(Set)?["']?\s*$/m.test(f.text))
      out.push(...argocd(r, f));
    else if (/\.ya?ml$/.test(f.path) && /^apiVersion:\s*["']?skaffold\//m.test(f.text))
      out.push(...skaffold(r, f));
  }
  // The chart's own values files for other environments, unless a deployer already layers them.
  const used = new Set(
    out.flatMap((d) => d.layers.flatMap((l) => [...l.origins.values()])).map((o) => o.path),
  );
  for (const f of files.values()) {
    const dir = dirname(f.path);
    if (!charts.has(dir) || !ENV_VALUES.test(basename(f.path)) || used.has(f.path)) continue;
    const layer = r.file(f, dir, basename(f.path));
    if (layer)
      out.push({
        chart: dir,
        release: null,
        via: 'values-file',
        at: { path: f.path, line: 1 },
        label: basename(f.path),
        layers: [layer],
      });
  }
  out.sort((a, b) => compareStrings(a.at.path, b.at.path) || a.at.line - b.at.line);
  return { deployments: out, gaps: r.gaps };
}

function docsOf(f: SourceFile): YamlDoc[] {
  return parseYamlDocuments(f).docs;
}

function helmfile(r: Reader, f: SourceFile): HelmDeployment[] {
  const out: HelmDeployment[] = [];
  const base = dirname(f.path);
  for (const doc of docsOf(f)) {
    if (!isDict(doc.value) || !Array.isArray(doc.value.releases)) continue;
    doc.value.releases.forEach((rel: unknown, i: number) => {
      if (!isDict(rel)) return;
      const chart = r.chart(base, rel.chart);
      if (!chart) return;
      const layers: ValuesLayer[] = [];
      const values = Array.isArray(rel.values) ? rel.values : [];
      values.forEach((v: unknown, j: number) => {
        const layer =
          typeof v === 'string'
            ? r.file(f, base, v)
            : layerOf(f.path, doc, v, ['releases', i, 'values', j]);
        if (layer) layers.push(layer);
      });
      const sets = (Array.isArray(rel.set) ? rel.set : []).flatMap((s: unknown, j: number) =>
        isDict(s) && typeof s.name === 'string'
          ? [
              {
                name: s.name,
                value: s.value,
                origin: { path: f.path, line: doc.span(['releases', i, 'set', j, 'value']).start },
              },
            ]
          : [],
      );
      if (sets.length) layers.push(setLayer(sets));
      const name = typeof rel.name === 'string' ? rel.name : null;
      out.push({
        chart,
        release: name,
        via: 'helmfile',
        at: { path: f.path, line: doc.span(['releases', i]).start },
        label: `${basename(f.path)} release ${name ?? i + 1}`,
        layers,
      });
    });
  }
  return out;
}

/** `"..."` of an HCL string attribute `name = "..."` in `text` (no interpolation). */
function hclString(text: string, name: string): string | null {
  return new RegExp(`(?:^|\\n)\\s*${name}\\s*=\\s*"([^"$]*)"`).exec(text)?.[1] ?? null;
}

function terraform(r: Reader, f: SourceFile): HelmDeployment[] {
  const out: HelmDeployment[] = [];
  const lines = f.text.split('\n');
  const base = dirname(f.path);
  for (const b of topLevelBlocks(f.text)) {
    if (b.type !== 'resource' || b.labels[0] !== 'helm_release') continue;
    const body = lines.slice(b.start - 1, b.end).join('\n');
    const chart = r.chart(base, hclString(body, 'chart'));
    if (!chart) continue;
    const layers: ValuesLayer[] = [];
    // `values = [file("..."), templatefile("...", {...})]`: each file a layer, in order.
    const list = /\bvalues\s*=\s*\[([\s\S]*?)\]\s*\n/.exec(body)?.[1] ?? '';
    for (const m of list.matchAll(/\b(?:file|templatefile)\(\s*"([^"]+)"/g)) {
      const layer = r.file(f, base, m[1]!);
      if (layer) layers.push(layer);
    }
    // `set { name = "a.b" value = "c" }` blocks (and `set = [{ name, value }]`), each at its line.
    const sets: { name: string; value: unknown; origin: ValueOrigin }[] = [];
    const SET = /\bname\s*=\s*"([^"$]+)"[\s,]*value\s*=\s*"([^"$]*)"/g;
    for (let l = b.start; l <= b.end; l++) {
      if (!/^\s*set(_sensitive)?\s*(=\s*\[|\{)/.test(lines[l - 1] ?? '')) continue;
      const from = lines.slice(l - 1, b.end).join('\n');
      const block = from.slice(0, from.search(/\}\s*(\]|\n|$)/) + 1);
      for (const m of block.matchAll(SET)) {
        const at = l + from.slice(0, from.indexOf(m[0])).split('\n').length - 1;
        const valueLine = at + m[0].slice(0, m[0].search(/value\s*=/)).split('\n').length - 1;
        sets.push({ name: m[1]!, value: m[2]!, origin: { path: f.path, line: valueLine } });
      }
    }
    if (sets.length) layers.push(setLayer(sets));
    const release = hclString(body, 'name');
    out.push({
      chart,
      release,
      via: 'terraform',
      at: { path: f.path, line: b.start },
      label: `${basename(f.path)} helm_release ${b.labels[1] ?? release ?? ''}`.trim(),
      layers,
    });
  }
  return out;
}

/** Argo CD: a source whose `path` is a chart of the repository. */
function argocd(r: Reader, f: SourceFile): HelmDeployment[] {
  const out: HelmDeployment[] = [];
  for (const doc of docsOf(f)) {
    const v = doc.value;
    if (!isDict(v) || !/^Application(Set)?$/.test(String(v.kind))) continue;
    const specAt: PathItem[] =
      v.kind === 'ApplicationSet' ? ['spec', 'template', 'spec'] : ['spec'];
    let spec: unknown = v;
    for (const k of specAt) spec = isDict(spec) ? spec[k] : undefined;
    if (!isDict(spec)) continue;
    const sources: [unknown, PathItem[]][] = Array.isArray(spec.sources)
      ? spec.sources.map((s: unknown, i: number) => [s, [...specAt, 'sources', i]])
      : [[spec.source, [...specAt, 'source']]];
    for (const [src, at] of sources) {
      if (!isDict(src) || typeof src.path !== 'string' || src.path.includes('{{')) continue;
      const chart = r.chart('', src.path);
      if (!chart) continue;
      const helm = isDict(src.helm) ? src.helm : {};
      const layers: ValuesLayer[] = [];
      for (const file of Array.isArray(helm.valueFiles) ? helm.valueFiles : [])
        if (typeof file === 'string') {
          const layer = r.file(f, chart, file);
          if (layer) layers.push(layer);
        }
      const inline = isDict(helm.valuesObject) ? helm.valuesObject : null;
      if (inline) {
        const layer = layerOf(f.path, doc, inline, [...at, 'helm', 'valuesObject']);
        if (layer) layers.push(layer);
      } else if (typeof helm.values === 'string') {
        // A YAML string: its values are cited at the `values:` key.
        const line = doc.span([...at, 'helm', 'values']).start;
        const parsed = parseYamlDocuments({ path: f.path, text: helm.values }).docs[0];
        if (parsed && isDict(parsed.value)) {
          const layer = layerOf(f.path, parsed, parsed.value, [])!;
          for (const o of layer.origins.values()) o.line = line + o.line;
          layers.push(layer);
        }
      }
      const params = Array.isArray(helm.parameters) ? helm.parameters : [];
      const sets = params.flatMap((p: unknown, i: number) =>
        isDict(p) && typeof p.name === 'string'
          ? [
              {
                name: p.name,
                value: p.value,
                origin: {
                  path: f.path,
                  line: doc.span([...at, 'helm', 'parameters', i, 'value']).start,
                },
              },
            ]
          : [],
      );
      if (sets.length) layers.push(setLayer(sets));
      const release = typeof helm.releaseName === 'string' ? helm.releaseName : null;
      const name = isDict(v.metadata) ? String(v.metadata.name ?? '') : '';
      out.push({
        chart,
        release,
        via: 'argocd',
        at: { path: f.path, line: doc.span(at).start },
        label: `${basename(f.path)} ${String(v.kind)} ${name}`.trim(),
        layers,
      });
    }
  }
  return out;
}

/** Skaffold: `deploy.helm.releases` (v2) or `manifests.helm.releases` (v4); profiles not. */
function skaffold(r: Reader, f: SourceFile): HelmDeployment[] {
  const out: HelmDeployment[] = [];
  const base = dirname(f.path);
  for (const doc of docsOf(f)) {
    const v = doc.value;
    if (!isDict(v)) continue;
    for (const top of ['deploy', 'manifests']) {
      const helm =
        isDict(v[top]) && isDict((v[top] as Dict).helm) ? ((v[top] as Dict).helm as Dict) : null;
      const releases = helm && Array.isArray(helm.releases) ? helm.releases : [];
      releases.forEach((rel: unknown, i: number) => {
        if (!isDict(rel)) return;
        const chart = r.chart(base, rel.chartPath);
        if (!chart) return;
        const at: PathItem[] = [top, 'helm', 'releases', i];
        const layers: ValuesLayer[] = [];
        for (const file of Array.isArray(rel.valuesFiles) ? rel.valuesFiles : [])
          if (typeof file === 'string') {
            const layer = r.file(f, base, file);
            if (layer) layers.push(layer);
          }
        const overrides = layerOf(f.path, doc, rel.overrides, [...at, 'overrides']);
        if (overrides) layers.push(overrides);
        if (isDict(rel.setValues))
          layers.push(
            setLayer(
              Object.entries(rel.setValues).map(([name, value]) => ({
                name,
                value,
                origin: { path: f.path, line: doc.span([...at, 'setValues', name]).start },
              })),
            ),
          );
        const release = typeof rel.name === 'string' ? rel.name : null;
        out.push({
          chart,
          release,
          via: 'skaffold',
          at: { path: f.path, line: doc.span(at).start },
          label: `${basename(f.path)} release ${release ?? i + 1}`,
          layers,
        });
      });
    }
  }
  return out;
}

/** The values of `layers` merged over `defaults`, with each leaf's origin (last layer wins). */
export function layered(
  defaults: Dict,
  layers: ValuesLayer[],
): { values: Dict; origins: Map<string, ValueOrigin> } {
  const origins = new Map<string, ValueOrigin>();
  for (const l of layers) {
    mergeInto(defaults, l.values, true);
    for (const [k, o] of l.origins) origins.set(k, { ...o, deployer: true });
  }
  return { values: defaults, origins };
}
