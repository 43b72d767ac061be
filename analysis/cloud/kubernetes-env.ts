/**
 * The environment of a Kubernetes container (kubernetes.ts): `env` values (addresses resolved
 * through the cluster's Services), `valueFrom` secret and config map keys, and `envFrom` maps,
 * each cited at its place in the manifest.
 */
import { entityKey, type Evidence } from '../evidence';
import { asArray, asString, isRecord } from '../shared/values';
import type { PathItem } from '../shared/yaml';
import { envReferences, type HostResolver } from './env';
import { cite, type Cluster, type Obj, type Workload } from './kubernetes-cluster';

/** The `valueFrom` references to one key of a secret or a config map. */
const KEY_REFS = [
  { via: 'secretKeyRef', kind: 'secret', relationship: 'reads_secret', phrase: 'secret' },
  { via: 'configMapKeyRef', kind: 'config', relationship: 'reads_config', phrase: 'config map' },
] as const;

export function containerEnv(
  w: Workload,
  c: Obj,
  cAt: PathItem[],
  label: string,
  subject: string,
  resolve: HostResolver,
  cluster: Cluster,
): Evidence[] {
  const out: Evidence[] = [];
  const refEvidence = (
    path: PathItem[],
    rel: string,
    object: string,
    summary: string,
    attributes: Obj,
  ) =>
    out.push(
      cite(w, path, {
        kind: 'env-reference',
        subject,
        relationship: rel,
        object,
        summary,
        attributes,
      }),
    );
  // The value a ConfigMap or Secret of these files gives a variable feeds the same address
  // resolution as a value written in `env`; secret values themselves never leave env.ts.
  const resolved = (
    path: PathItem[],
    variable: string,
    value: unknown,
    via: string,
    attributes: Obj,
  ) => {
    for (const r of envReferences(variable, value, resolve, via)) {
      if (r.kind !== 'env-reference') continue;
      const from = asString(attributes.config) ?? asString(attributes.secret) ?? '';
      const secret = attributes.config === undefined;
      // A Secret's value is not shown, even redacted: only the host it names.
      const shown = `${variable}=${String(r.attributes.value)}`;
      const summary = secret ? r.summary.replace(shown, variable) : r.summary;
      out.push(
        cite(w, path, {
          ...r,
          subject,
          summary: `${label} ${summary} (via ${secret ? 'secret' : 'config map'} ${from})`,
          attributes: {
            ...r.attributes,
            ...(secret ? { value: null } : {}),
            ...attributes,
          },
        }),
      );
    }
  };
  const explicit = new Set(
    asArray(c.env)
      .filter(isRecord)
      .map((e) => asString(e.name) ?? ''),
  );
  asArray(c.env).forEach((e, j) => {
    if (!isRecord(e)) return;
    const name = asString(e.name) ?? '';
    const path = [...cAt, 'env', j];
    const from = isRecord(e.valueFrom) ? e.valueFrom : null;
    if (!from) {
      for (const r of envReferences(name, e.value, resolve, 'env')) {
        out.push(cite(w, path, { ...r, kind: r.kind, subject, summary: `${label} ${r.summary}` }));
      }
      return;
    }
    const ref = KEY_REFS.find((r) => isRecord(from[r.via]));
    if (!ref) return;
    const at = from[ref.via] as Record<string, unknown>;
    const source = asString(at.name) ?? '';
    const key = asString(at.key) ?? '';
    refEvidence(
      path,
      ref.relationship,
      entityKey(ref.kind, source),
      `${label} reads ${name} from ${ref.phrase} ${source}`,
      // A secret's key is cited as written (absent when it is).
      {
        variable: name,
        from: ref.via,
        [ref.kind]: source,
        key: ref.kind === 'secret' ? asString(at.key) : key,
      },
    );
    const value =
      ref.kind === 'secret'
        ? cluster.secretData(source, w.namespace, w.file.path)?.[key]
        : cluster.configValue(source, key, w.namespace, w.file.path);
    resolved(path, name, value, ref.via, { from: ref.via, [ref.kind]: source, key });
  });
  asArray(c.envFrom).forEach((e, j) => {
    if (!isRecord(e)) return;
    const path = [...cAt, 'envFrom', j];
    const prefix = asString(e.prefix) ?? '';
    // Every key of the map becomes a variable (an `env` entry of the same name wins). The
    // container receives them all whether its code reads them or not: `received: 'bulk'`.
    const bulk = (data: Record<string, unknown> | null, attributes: Obj) => {
      for (const [key, value] of Object.entries(data ?? {})) {
        const variable = `${prefix}${key}`;
        if (explicit.has(variable) || (typeof value === 'string' && value.includes('\n'))) continue;
        resolved(path, variable, value, attributes.from as string, {
          ...attributes,
          key,
          received: 'bulk',
        });
      }
    };
    if (isRecord(e.configMapRef)) {
      const config = asString(e.configMapRef.name) ?? '';
      refEvidence(
        path,
        'reads_config',
        entityKey('config', config),
        `${label} loads its environment from config map ${config}`,
        {
          from: 'envFrom.configMapRef',
          config,
        },
      );
      bulk(cluster.configData(config, w.namespace, w.file.path), {
        from: 'envFrom.configMapRef',
        config,
      });
    } else if (isRecord(e.secretRef)) {
      const secret = asString(e.secretRef.name) ?? '';
      refEvidence(
        path,
        'reads_secret',
        entityKey('secret', secret),
        `${label} loads its environment from secret ${secret}`,
        {
          from: 'envFrom.secretRef',
          secret,
        },
      );
      bulk(cluster.secretData(secret, w.namespace, w.file.path), {
        from: 'envFrom.secretRef',
        secret,
      });
    }
  });
  return out;
}
