/**
 * The Kubernetes objects of an audit, read together: workloads with their pod templates, and the
 * Service/ConfigMap lookups that resolve in-cluster DNS names to the workload behind them.
 */
import { entityKey, type AnalyzerGap, type Evidence, type SourceFile } from '../evidence';
import { evidence, type EvidenceFields } from '../shared/evidence';
import { dirname, joinPath } from '../shared/paths';
import { asArray, asString, isRecord } from '../shared/values';
import { parseYamlDocuments, type PathItem, type YamlDoc } from '../shared/yaml';
import type { HostResolver, ResolvedHost } from './env';
import { nearestOf } from './kubernetes-nearest';
import { resolvePlaceholders, workloadIdentity } from './kubernetes-placeholders';

export type Obj = Record<string, unknown>;

export interface K8sObject {
  file: SourceFile;
  doc: YamlDoc;
  /** Path of the object inside its document (`[]`, or `['items', i]` inside a List). */
  at: PathItem[];
  obj: Obj;
  kind: string;
  name: string;
  namespace: string | null;
}

/** Evidence of the Kubernetes provider, cited at `path` inside the object. */
export function cite(
  o: K8sObject,
  path: PathItem[],
  f: Omit<EvidenceFields, 'source' | 'provider'>,
): Evidence {
  return evidence(o.file, o.doc.span([...o.at, ...path]), {
    source: 'cloud',
    provider: 'kubernetes',
    ...f,
  });
}

export interface Workload extends K8sObject {
  podPath: PathItem[];
  pod: Obj;
  podLabels: Record<string, string>;
}

const WORKLOAD_KINDS = new Set([
  'Deployment',
  'StatefulSet',
  'DaemonSet',
  'ReplicaSet',
  'Job',
  'CronJob',
  'Pod',
]);

/** True when a parsed YAML value is a Kubernetes object (or List of them). */
export function isKubernetesObject(v: unknown): boolean {
  return isRecord(v) && typeof v.apiVersion === 'string' && typeof v.kind === 'string';
}

/** Parses manifests; returns the objects found and parse gaps. */
export function readManifests(files: SourceFile[]): { objects: K8sObject[]; gaps: AnalyzerGap[] } {
  const objects: K8sObject[] = [];
  const gaps: AnalyzerGap[] = [];
  for (const file of files) {
    const y = parseYamlDocuments(file);
    for (const message of y.errors)
      gaps.push({ path: file.path, reason: 'yaml_parse_error', message });
    // A file chosen for its `apiVersion:` and `kind:` lines that holds no object with both
    // (they sit under another key, the documents are lists): read to nothing, so said.
    if (y.errors.length === 0 && !y.docs.some((d) => isKubernetesObject(d.value)))
      gaps.push({
        path: file.path,
        reason: 'kubernetes_no_objects',
        message:
          'no document of this file is a Kubernetes object (apiVersion and kind at its root)',
      });
    for (const doc of y.docs) {
      if (!isKubernetesObject(doc.value)) continue;
      const v = doc.value as Obj;
      if (
        v.kind === 'List' ||
        (typeof v.kind === 'string' && v.kind.endsWith('List') && Array.isArray(v.items))
      ) {
        asArray(v.items).forEach((item, i) => {
          const o = toObject(file, doc, ['items', i], item);
          if (o) objects.push(o);
        });
      } else {
        const o = toObject(file, doc, [], v);
        if (o) objects.push(o);
      }
    }
  }
  return { objects, gaps };
}

/**
 * The ConfigMaps and Secrets kustomize `configMapGenerator` / `secretGenerator` entries generate
 * (`literals`, and `envs` files relative to the kustomization), named as written: kustomize
 * rewrites the workloads' references to the hashed name, so a lookup by the written name is right.
 * `files` entries (whole files as one key) are not environment variables and are skipped.
 */
export function generatedObjects(kustomizations: SourceFile[], files: SourceFile[]): K8sObject[] {
  const byPath = new Map(files.map((f) => [f.path, f]));
  const out: K8sObject[] = [];
  for (const file of kustomizations) {
    for (const doc of parseYamlDocuments(file).docs) {
      const k = isRecord(doc.value) ? doc.value : null;
      if (!k) continue;
      for (const [field, kind] of [
        ['configMapGenerator', 'ConfigMap'],
        ['secretGenerator', 'Secret'],
      ] as const) {
        asArray(k[field]).forEach((g, i) => {
          const name = isRecord(g) ? asString(g.name) : null;
          if (!isRecord(g) || !name) return;
          const data: Record<string, string> = {};
          for (const env of asArray(g.envs)) {
            const path = joinPath(dirname(file.path), String(env));
            const text = path === null ? undefined : byPath.get(path)?.text;
            for (const line of (text ?? '').split(/\r?\n/)) {
              const m = /^\s*([A-Za-z_][\w.-]*)\s*=\s*(.*?)\s*$/.exec(line);
              if (m) data[m[1]!] = m[2]!;
            }
          }
          for (const literal of asArray(g.literals)) {
            const m = /^([^=]+)=(.*)$/s.exec(String(literal));
            if (m) data[m[1]!.trim()] = m[2]!.replace(/^(["'])(.*)\1$/s, '$2');
          }
          // Secret literals are plain text; `stringData` keeps them out of base64 decoding.
          const obj = {
            kind,
            metadata: { name },
            [kind === 'Secret' ? 'stringData' : 'data']: data,
          };
          const namespace = asString(g.namespace) ?? asString(k.namespace);
          out.push({ file, doc, at: [field, i], obj, kind, name, namespace });
        });
      }
    }
  }
  return out;
}

function toObject(file: SourceFile, doc: YamlDoc, at: PathItem[], v: unknown): K8sObject | null {
  if (!isKubernetesObject(v)) return null;
  const obj = v as Obj;
  const meta = isRecord(obj.metadata) ? obj.metadata : {};
  const raw = asString(meta.name);
  if (!raw) return null;
  // An envsubst template's name (`db-${ENV:-dev}`) is read with its defaults.
  const name = resolvePlaceholders(raw);
  return { file, doc, at, obj, kind: String(obj.kind), name, namespace: asString(meta.namespace) };
}

function toWorkload(o: K8sObject): Workload | null {
  if (!WORKLOAD_KINDS.has(o.kind)) return null;
  const spec = isRecord(o.obj.spec) ? o.obj.spec : {};
  let podPath: PathItem[];
  let pod: unknown;
  if (o.kind === 'Pod') {
    podPath = [];
    pod = o.obj;
  } else if (o.kind === 'CronJob') {
    podPath = ['spec', 'jobTemplate', 'spec', 'template'];
    const job =
      isRecord(spec.jobTemplate) && isRecord(spec.jobTemplate.spec) ? spec.jobTemplate.spec : {};
    pod = job.template;
  } else {
    podPath = ['spec', 'template'];
    pod = spec.template;
  }
  if (!isRecord(pod)) return null;
  const meta = isRecord(pod.metadata) ? pod.metadata : {};
  const podLabels = stringMap(meta.labels);
  // A templated name (`db-deployment-${ENV:-dev}`) gives way to the workload's name label.
  const own = isRecord(o.obj.metadata) ? o.obj.metadata : {};
  const name = workloadIdentity(asString(own.name) ?? o.name, podLabels, stringMap(own.labels));
  return { ...o, name, podPath, pod, podLabels };
}

export function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (isRecord(v)) for (const [k, x] of Object.entries(v)) out[k] = String(x);
  return out;
}

function sameNamespace(a: string | null, b: string | null): boolean {
  return a === null || b === null || a === b;
}

export class Cluster {
  readonly workloads: Workload[] = [];
  readonly workloadOf = new Map<K8sObject, Workload>();
  readonly services: K8sObject[];
  readonly configMaps: K8sObject[];
  readonly secrets: K8sObject[];

  /** `generated`: ConfigMaps and Secrets made by kustomize generators, for lookups only. */
  constructor(objects: K8sObject[], generated: K8sObject[] = []) {
    for (const o of objects) {
      const w = toWorkload(o);
      if (w) {
        this.workloads.push(w);
        this.workloadOf.set(o, w);
      }
    }
    this.services = objects.filter((o) => o.kind === 'Service');
    this.configMaps = [...objects, ...generated].filter((o) => o.kind === 'ConfigMap');
    this.secrets = [...objects, ...generated].filter((o) => o.kind === 'Secret');
  }

  /**
   * The workload a Service selects: of several matches, the one nearest the Service's file (its
   * own variant, kubernetes-nearest.ts), then the first by name.
   */
  selected(svc: K8sObject): Workload | null {
    const spec = isRecord(svc.obj.spec) ? svc.obj.spec : {};
    const matches = this.podsMatching(stringMap(spec.selector), svc.namespace);
    return nearestOf(matches, svc.file.path) ?? matches[0] ?? null;
  }

  /**
   * The long-running workloads whose pods a label selector (`matchLabels`) picks in a namespace,
   * sorted by name; empty for an empty selector (it picks every pod, which names no peer).
   */
  podsMatching(selector: Record<string, string>, namespace: string | null): Workload[] {
    const keys = Object.keys(selector);
    if (keys.length === 0) return [];
    return this.workloads
      .filter((w) => w.kind !== 'Job' && w.kind !== 'CronJob')
      .filter((w) => sameNamespace(w.namespace, namespace))
      .filter((w) => keys.every((k) => w.podLabels[k] === selector[k]))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Service `name`: of several, the one nearest file `from` (its variant's), else the first. */
  service(name: string, namespace: string | null, from: string | null = null): K8sObject | null {
    const matches = this.services.filter(
      (s) => s.name === name && sameNamespace(s.namespace, namespace),
    );
    return nearestOf(matches, from) ?? matches[0] ?? null;
  }

  /** Entity key for traffic sent to Service `name`: the selected workload, else the Service. */
  /** Whether these manifests declare a Service or a workload of that name. */
  declares(name: string, namespace: string | null): boolean {
    return (
      this.service(name, namespace) !== null ||
      this.workloads.some((w) => w.name === name && sameNamespace(w.namespace, namespace))
    );
  }

  serviceTarget(name: string, namespace: string | null, from: string | null = null): ResolvedHost {
    const svc = this.service(name, namespace, from);
    const w = svc ? this.selected(svc) : null;
    if (w) return { key: entityKey('service', w.name), name: w.name, via: 'kubernetes-service' };
    return {
      key: entityKey('service', name),
      name,
      via: svc ? 'kubernetes-service' : 'cluster-dns',
    };
  }

  /** Host names resolved from a namespace and (for the nearest variant's objects) a file. */
  resolver(fromNamespace: string | null, from: string | null = null): HostResolver {
    return (host) => {
      const short = host.replace(/\.svc\.cluster\.local\.?$/, '').replace(/\.svc$/, '');
      const clusterDns = short !== host;
      const labels = short.split('.');
      if (labels.length > 2) return null;
      const [name = '', ns = null] = labels;
      if (ns !== null && !clusterDns && !this.knownIn(name, ns, fromNamespace)) return null;
      const namespace = ns ?? fromNamespace;
      if (clusterDns || this.service(name, namespace, from))
        return this.serviceTarget(name, namespace, from);
      const w = this.workloads.find(
        (x) => x.name === name && sameNamespace(x.namespace, namespace),
      );
      if (w) return { key: entityKey('service', w.name), name: w.name, via: 'workload-name' };
      // A single-label name only resolves through the cluster's DNS search path: a Service
      // defined outside these files, never an Internet host.
      return ns === null
        ? { key: entityKey('service', name), name, via: 'unresolved-short-name' }
        : null;
    };
  }

  /** `<svc>.<ns>` names a Service of ours (and is not an outside `host.tld`). */
  private knownIn(name: string, ns: string, fromNamespace: string | null): boolean {
    return this.services.some(
      (s) =>
        s.name === name &&
        (s.namespace === ns ||
          (s.namespace === null && (ns === fromNamespace || ns === 'default'))),
    );
  }

  configValue(
    name: string,
    key: string,
    namespace: string | null,
    from: string | null = null,
  ): unknown {
    return this.configData(name, namespace, from)?.[key];
  }

  /**
   * The keys and values of ConfigMap `name` declared in these files (`data`), or null when it is
   * not declared here. One in the workload's namespace wins over one without a namespace; of
   * several, the one of the variant of file `from` (kubernetes-nearest.ts).
   */
  configData(
    name: string,
    namespace: string | null,
    from: string | null = null,
  ): Record<string, unknown> | null {
    const cm = this.find(this.configMaps, name, namespace, from);
    if (!cm) return null;
    return isRecord(cm.obj.data) ? cm.obj.data : {};
  }

  /** The keys and values of Secret `name`: `data` decoded from base64, then `stringData` over it. */
  secretData(
    name: string,
    namespace: string | null,
    from: string | null = null,
  ): Record<string, unknown> | null {
    const s = this.find(this.secrets, name, namespace, from);
    if (!s) return null;
    const out: Record<string, unknown> = {};
    if (isRecord(s.obj.data)) {
      for (const [k, v] of Object.entries(s.obj.data)) {
        const decoded = decodeBase64(asString(v));
        if (decoded !== null) out[k] = decoded;
      }
    }
    if (isRecord(s.obj.stringData)) Object.assign(out, s.obj.stringData);
    return out;
  }

  private find(
    list: K8sObject[],
    name: string,
    namespace: string | null,
    from: string | null,
  ): K8sObject | null {
    const matches = list.filter((c) => c.name === name && sameNamespace(c.namespace, namespace));
    const exact = matches.filter((c) => c.namespace === namespace);
    // Two declarations with the same contents are one, whichever variant is taken.
    const same = (a: K8sObject, b: K8sObject) =>
      JSON.stringify([a.obj.data, a.obj.stringData]) ===
      JSON.stringify([b.obj.data, b.obj.stringData]);
    return nearestOf(exact.length ? exact : matches, from, same);
  }
}

/** Base64 text as UTF-8, or null when it is not base64 or not text. */
function decodeBase64(v: string | null): string | null {
  if (v === null) return null;
  const compact = v.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 !== 0) return null;
  const text = Buffer.from(compact, 'base64').toString('utf8');
  const binary = [...text].some((c) => c.charCodeAt(0) < 9 || c === '\ufffd');
  return binary ? null : text;
}
