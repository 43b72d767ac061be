/**
 * Kubernetes objects other than workloads: Services, Ingresses, ConfigMaps, Secrets and
 * NetworkPolicies, and the citation every Kubernetes record uses.
 */
import { entityKey, type Evidence } from '../evidence';
import { isSecretName, looksLikeSecretValue, placeholderReason } from '../shared/secrets';
import { asArray, asString, isRecord } from '../shared/values';
import type { PathItem } from '../shared/yaml';
import { redact } from './common';
import { envReferences } from './env';
import { cite, stringMap, type Cluster, type K8sObject, type Obj } from './kubernetes-cluster';
import { resolvePlaceholders } from './kubernetes-placeholders';
const INTERNAL_LB_ANNOTATIONS = [
  'service.beta.kubernetes.io/aws-load-balancer-internal',
  'service.beta.kubernetes.io/azure-load-balancer-internal',
  'networking.gke.io/load-balancer-type',
  'cloud.google.com/load-balancer-type',
];

export function serviceEvidence(svc: K8sObject, cluster: Cluster): Evidence[] {
  const spec = isRecord(svc.obj.spec) ? svc.obj.spec : {};
  const meta = isRecord(svc.obj.metadata) ? svc.obj.metadata : {};
  const annotations = stringMap(meta.annotations);
  const type = asString(spec.type) ?? 'ClusterIP';
  const internalLb = INTERNAL_LB_ANNOTATIONS.some((a) =>
    /^(true|internal)$/i.test(annotations[a] ?? ''),
  );
  const w = cluster.selected(svc);
  const subject = entityKey('service', w ? w.name : svc.name);
  const isPublic = type === 'NodePort' || (type === 'LoadBalancer' && !internalLb);
  const ports = asArray(spec.ports)
    .filter(isRecord)
    .map((p) => ({
      name: asString(p.name),
      port: p.port ?? null,
      target_port: p.targetPort ?? p.port ?? null,
      node_port: p.nodePort ?? null,
      protocol: asString(p.protocol) ?? 'TCP',
    }));
  const target = w ? `${w.kind} ${w.name}` : 'no workload found in these manifests';
  return [
    cite(svc, [], {
      kind: 'service-exposed',
      subject,
      summary: `Service ${svc.name} (${type}${isPublic ? ', public' : ''}) exposes ${target}`,
      attributes: {
        service: svc.name,
        namespace: svc.namespace,
        type,
        ports,
        public: isPublic,
        internal_load_balancer: internalLb,
        headless: spec.clusterIP === 'None',
        selector: stringMap(spec.selector),
        selected_workload: w ? w.name : null,
        aliases: [svc.name],
      },
    }),
  ];
}

export function ingressEvidence(ing: K8sObject, cluster: Cluster): Evidence[] {
  const spec = isRecord(ing.obj.spec) ? ing.obj.spec : {};
  const subject = entityKey('ingress', ing.name);
  const tlsHosts = new Set(
    asArray(spec.tls).flatMap((t) => (isRecord(t) ? asArray(t.hosts).map(String) : [])),
  );
  const anyTls = asArray(spec.tls).length > 0;
  const ingressClass = asString(spec.ingressClassName);
  const out: Evidence[] = [];
  const route = (path: PathItem[], backend: unknown, host: string | null, httpPath: Obj | null) => {
    const b = backendOf(backend);
    if (!b) return;
    const target = cluster.serviceTarget(b.service, ing.namespace, ing.file.path);
    const tls = host ? tlsHosts.has(host) : anyTls;
    // A catch-all backend no manifest here declares (ingress-nginx's `default-http-backend`) is
    // the controller's own error page, installed with it: recorded, but no service of ours.
    const controllers =
      httpPath === null && host === null && !cluster.declares(b.service, ing.namespace);
    out.push(
      cite(ing, path, {
        kind: 'ingress-route',
        subject,
        relationship: controllers ? null : 'routes_to',
        object: controllers ? null : target.key,
        summary: `Ingress ${ing.name} routes ${host ?? '*'}${asString(httpPath?.path) ?? ''} to service ${b.service}${controllers ? " (a default backend no manifest here declares: the ingress controller's own)" : ''}`,
        attributes: {
          ...(controllers ? { undeclared_default_backend: true } : {}),
          host,
          path: asString(httpPath?.path),
          path_type: asString(httpPath?.pathType),
          service: b.service,
          port: b.port,
          tls,
          public: true,
          ingress_class: ingressClass,
        },
      }),
    );
  };
  asArray(spec.rules).forEach((rule, i) => {
    if (!isRecord(rule)) return;
    const host = asString(rule.host);
    const http = isRecord(rule.http) ? rule.http : {};
    asArray(http.paths).forEach((p, j) => {
      if (isRecord(p)) route(['spec', 'rules', i, 'http', 'paths', j], p.backend, host, p);
    });
  });
  if (spec.defaultBackend) route(['spec', 'defaultBackend'], spec.defaultBackend, null, null);
  if (spec.backend) route(['spec', 'backend'], spec.backend, null, null);
  return out;
}

function backendOf(b: unknown): { service: string; port: unknown } | null {
  if (!isRecord(b)) return null;
  if (isRecord(b.service)) {
    const written = asString(b.service.name);
    const name = written === null ? null : resolvePlaceholders(written);
    const port = isRecord(b.service.port)
      ? (b.service.port.number ?? b.service.port.name ?? null)
      : null;
    return name ? { service: name, port } : null;
  }
  const written = asString(b.serviceName);
  const name = written === null ? null : resolvePlaceholders(written);
  return name ? { service: name, port: b.servicePort ?? null } : null;
}

export function configMapEvidence(cm: K8sObject, cluster: Cluster): Evidence[] {
  const subject = entityKey('config', cm.name);
  const data = isRecord(cm.obj.data) ? cm.obj.data : {};
  const values: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(data)) {
    const s = asString(v);
    values[k] =
      isSecretName(k) || s === null || s.includes('\n') || looksLikeSecretValue(s.trim())
        ? null
        : redact(s).slice(0, 200);
  }
  const out: Evidence[] = [
    cite(cm, [], {
      kind: 'config-declared',
      subject,
      summary: `ConfigMap ${cm.name} declares ${Object.keys(data).length} keys`,
      attributes: {
        namespace: cm.namespace,
        keys: Object.keys(data).sort(),
        binary_keys: isRecord(cm.obj.binaryData) ? Object.keys(cm.obj.binaryData).sort() : [],
        values,
      },
    }),
  ];
  const resolve = cluster.resolver(cm.namespace, cm.file.path);
  out.push(...springApplicationConfig(cm, data, cluster));
  for (const [k, v] of Object.entries(data)) {
    if (typeof v === 'string' && v.includes('\n')) continue;
    for (const r of envReferences(k, v, resolve, 'configmap')) {
      out.push(
        cite(cm, ['data', k], { ...r, subject, summary: `ConfigMap ${cm.name} ${r.summary}` }),
      );
    }
  }
  return out;
}

export function secretEvidence(s: K8sObject): Evidence[] {
  const subject = entityKey('secret', s.name);
  const data = isRecord(s.obj.data) ? s.obj.data : {};
  const stringData = isRecord(s.obj.stringData) ? s.obj.stringData : {};
  const keys = [...new Set([...Object.keys(data), ...Object.keys(stringData)])].sort();
  const out: Evidence[] = [
    cite(s, [], {
      kind: 'secret-declared',
      subject,
      summary: `Secret ${s.name} declares keys ${keys.join(', ') || '(none)'}`,
      attributes: {
        namespace: s.namespace,
        type: asString(s.obj.type),
        keys,
        literal_values: keys.length > 0,
      },
    }),
  ];
  for (const [field, map] of [
    ['data', data],
    ['stringData', stringData],
  ] as const) {
    for (const [k, v] of Object.entries(map)) {
      const written = asString(v);
      if (written === null || written === '') continue;
      // `data` is base64: the placeholder test reads what it decodes to.
      const plain = field === 'data' ? Buffer.from(written, 'base64').toString('utf8') : written;
      const placeholder = looksLikeSecretValue(plain) ? null : placeholderReason(plain);
      out.push(
        cite(s, [field, k], {
          kind: 'literal-secret',
          subject,
          summary: `Secret ${s.name} commits a ${placeholder ? 'placeholder ' : ''}value for ${k}`,
          attributes: {
            variable: k,
            source: 'secret-manifest',
            ...(placeholder ? { placeholder } : {}),
          },
        }),
      );
    }
  }
  return out;
}

/** Label keys whose value is, by convention, the application's name. */
const NAME_LABELS = ['app.kubernetes.io/name', 'app', 'name', 'k8s-app', 'component'];

/**
 * The services a pod selector names: the workloads whose pod labels it matches, else (no
 * workload of these files matches) the value of a conventional name label (`name: cart`), as a
 * DNS short name resolves to a service declared elsewhere. Null for an empty selector.
 */
function selectedPeers(
  selector: unknown,
  namespace: string | null,
  cluster: Cluster,
): Array<{ key: string; name: string; resolution: string }> | null {
  const labels = stringMap(isRecord(selector) ? selector.matchLabels : null);
  if (Object.keys(labels).length === 0) return null;
  const matched = cluster.podsMatching(labels, namespace);
  if (matched.length > 0)
    return matched.map((w) => ({
      key: entityKey('service', w.name),
      name: w.name,
      resolution: 'pod-labels',
    }));
  const label = NAME_LABELS.find((k) => labels[k] !== undefined);
  const name = label ? labels[label] : undefined;
  return name ? [{ key: entityKey('service', name), name, resolution: 'name-label' }] : [];
}

/**
 * A NetworkPolicy states who may connect to whom: each `ingress.from` pod selector names callers
 * of the pods the policy selects, each `egress.to` pod selector names what they call. Only
 * selectors that name pods count (no empty selector, namespace-wide or ipBlock peers). The
 * relationship is `connects_to` with kind `network-policy`: a permission the system's authors
 * wrote for a connection they expect, weaker than an address the caller is given.
 */
export function networkPolicyEvidence(np: K8sObject, cluster: Cluster): Evidence[] {
  const spec = isRecord(np.obj.spec) ? np.obj.spec : {};
  const targets = selectedPeers(spec.podSelector, np.namespace, cluster);
  if (!targets || targets.length === 0) return [];
  const out: Evidence[] = [];
  for (const [field, peerField, inbound] of [
    ['ingress', 'from', true],
    ['egress', 'to', false],
  ] as const) {
    asArray(spec[field]).forEach((rule, i) => {
      if (!isRecord(rule)) return;
      const ports = asArray(rule.ports)
        .map((p) => (isRecord(p) ? (p.port ?? null) : null))
        .filter((p) => p !== null);
      asArray(rule[peerField]).forEach((peer, j) => {
        if (!isRecord(peer) || peer.namespaceSelector !== undefined) return;
        for (const other of selectedPeers(peer.podSelector, np.namespace, cluster) ?? []) {
          for (const t of targets) {
            const [from, to] = inbound ? [other, t] : [t, other];
            if (from.key === to.key) continue;
            out.push(
              cite(np, ['spec', field, i, peerField, j], {
                kind: 'network-policy',
                subject: from.key,
                relationship: 'connects_to',
                object: to.key,
                summary: `NetworkPolicy ${np.name} allows ${from.name} to connect to ${to.name}`,
                attributes: {
                  policy: np.name,
                  namespace: np.namespace,
                  direction: field,
                  ports,
                  resolution: other.resolution,
                },
              }),
            );
          }
        }
      });
    });
  }
  return out;
}

/** An application settings file held in a ConfigMap key (`application.properties: |`). */
const APP_SETTINGS_KEY = /^(application|bootstrap)([-_][\w.-]+)?\.(properties|ya?ml)$/i;

/**
 * Spring Cloud Kubernetes: a ConfigMap named after an application (its `spring.application.name`,
 * by convention the workload's name) whose data holds `application.properties` or
 * `application.yml` is that application's configuration. Each setting in it that points at a
 * host (`spring.mongodb.host: mongodb`, `spring.rabbitmq.addresses`, a URL) is the workload's
 * connection, cited at the ConfigMap key. Other ConfigMaps' embedded files are not read as
 * anyone's settings.
 */
function springApplicationConfig(
  cm: K8sObject,
  data: Record<string, unknown>,
  cluster: Cluster,
): Evidence[] {
  const workload = cluster.workloads.find(
    (w) => w.name === cm.name && (w.namespace ?? null) === (cm.namespace ?? null),
  );
  if (!workload) return [];
  const subject = entityKey('service', workload.name);
  const resolve = cluster.resolver(cm.namespace, cm.file.path);
  const out: Evidence[] = [];
  for (const [k, v] of Object.entries(data)) {
    if (!APP_SETTINGS_KEY.test(k) || typeof v !== 'string') continue;
    const yaml = !/\.properties$/i.test(k);
    const parents: { indent: number; key: string }[] = [];
    for (const raw of v.split('\n')) {
      const line = /^(\s*)([\w.\-[\]]+)\s*(?:=|:(?=\s|$))\s*(.*?)\s*$/.exec(raw);
      if (!line || raw.trimStart().startsWith('#')) continue;
      const indent = line[1]?.length ?? 0;
      let key = line[2] ?? '';
      const value = (line[3] ?? '').replace(/^(['"])(.*)\1$/, '$2');
      if (yaml) {
        while (parents.length && parents[parents.length - 1]!.indent >= indent) parents.pop();
        if (value === '') {
          parents.push({ indent, key });
          continue;
        }
        key = [...parents.map((p) => p.key), key].join('.');
      }
      if (value === '' || isSecretName(key)) continue;
      for (const r of envReferences(key, value, resolve, 'spring-cloud-kubernetes')) {
        if (r.kind !== 'env-reference') continue;
        out.push(
          cite(cm, ['data', k], {
            ...r,
            subject,
            summary: `ConfigMap ${cm.name} (Spring Cloud Kubernetes configuration of ${workload.name}) ${r.summary}`,
            attributes: { ...r.attributes, config_map: cm.name, setting: key },
          }),
        );
      }
    }
  }
  return out;
}
