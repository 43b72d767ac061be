/**
 * Kubernetes manifests (multi-document YAML, `kind: List`): workloads, Services, Ingresses,
 * ConfigMaps and Secrets. Service DNS names in env values resolve to the workload the Service
 * selects, so `redis-cart.default.svc.cluster.local:6379` becomes `service:redis-cart`.
 */
import { entityKey, type AnalyzerOutput, type Evidence, type SourceFile } from '../evidence';
import { imageAttributes, imageKey, parseImageRef } from '../shared/images';
import { isSecretName, looksLikeSecretValue, placeholderReason } from '../shared/secrets';
import { asArray, asString, isRecord } from '../shared/values';
import type { PathItem } from '../shared/yaml';
import { classifyDeclared, classifyImage, redact, singlePort } from './common';
import type { BuiltEngine } from './built-images';
import { daprComponentEvidence } from './dapr';
import { containerEnv } from './kubernetes-env';
import { envReferences } from './env';
import {
  cite,
  Cluster,
  readManifests,
  stringMap,
  type K8sObject,
  type Obj,
  type Workload,
} from './kubernetes-cluster';

/** Analyzes every manifest together so Services, workloads and ConfigMaps resolve across files. */
export function analyzeKubernetes(
  files: SourceFile[],
  generated: K8sObject[] = [],
  built: BuiltEngine = () => null,
): AnalyzerOutput {
  const { objects, gaps } = readManifests(files);
  const cluster = new Cluster(objects, generated);
  const evidence: Evidence[] = [];
  for (const o of objects) {
    const w = cluster.workloadOf.get(o);
    if (w) evidence.push(...workloadEvidence(w, cluster, built));
    else if (o.kind === 'Service') evidence.push(...serviceEvidence(o, cluster));
    else if (o.kind === 'Ingress') evidence.push(...ingressEvidence(o, cluster));
    else if (o.kind === 'ConfigMap') evidence.push(...configMapEvidence(o, cluster));
    else if (o.kind === 'Secret') evidence.push(...secretEvidence(o));
    else if (o.kind === 'NetworkPolicy') evidence.push(...networkPolicyEvidence(o, cluster));
    else if (o.kind === 'Component' && /^dapr\.io\//.test(String(o.obj.apiVersion)))
      evidence.push(...daprComponentEvidence(o, cluster));
  }
  return { evidence, gaps };
}

function containerFacts(c: Obj, podSecurity: Obj): Record<string, unknown> {
  const image = parseImageRef(asString(c.image) ?? '');
  const sc = isRecord(c.securityContext) ? c.securityContext : {};
  const resources = isRecord(c.resources) ? c.resources : {};
  const limits = isRecord(resources.limits) ? resources.limits : null;
  const runAsNonRoot = sc.runAsNonRoot ?? podSecurity.runAsNonRoot ?? null;
  const runAsUser = sc.runAsUser ?? podSecurity.runAsUser ?? null;
  return {
    name: asString(c.name),
    image: image?.raw ?? null,
    repo: image?.repo ?? null,
    tag: image?.tag ?? null,
    digest: image?.digest ?? null,
    ports: asArray(c.ports).map((p) => (isRecord(p) ? (p.containerPort ?? null) : null)),
    resource_limits_set: limits !== null && Object.keys(limits).length > 0,
    resource_limits: limits,
    resource_requests_set: isRecord(resources.requests),
    privileged: sc.privileged === true,
    run_as_non_root: runAsNonRoot,
    run_as_user: runAsUser,
    read_only_root_filesystem: sc.readOnlyRootFilesystem ?? null,
    allow_privilege_escalation: sc.allowPrivilegeEscalation ?? null,
    capabilities_add: isRecord(sc.capabilities) ? asArray(sc.capabilities.add).map(String) : [],
  };
}

function workloadEvidence(w: Workload, cluster: Cluster, built: BuiltEngine): Evidence[] {
  const subject = entityKey('service', w.name);
  const label = `${w.kind} ${w.name}`;
  const podSpec = isRecord(w.pod.spec) ? w.pod.spec : {};
  const podSecurity = isRecord(podSpec.securityContext) ? podSpec.securityContext : {};
  const spec = isRecord(w.obj.spec) ? w.obj.spec : {};
  const meta = isRecord(w.obj.metadata) ? w.obj.metadata : {};
  const containers = asArray(podSpec.containers).filter(isRecord);
  const initContainers = asArray(podSpec.initContainers).filter(isRecord);
  const podMeta = isRecord(w.pod.metadata) ? w.pod.metadata : {};
  const appId = stringMap(podMeta.annotations)['dapr.io/app-id'] ?? null;
  const groups: ['containers' | 'initContainers', Obj[]][] = [
    ['containers', containers],
    ['initContainers', initContainers],
  ];
  const out: Evidence[] = [
    cite(w, [], {
      kind: 'workload-declared',
      subject,
      summary: `${label} is declared`,
      attributes: {
        kind: w.kind,
        namespace: w.namespace,
        replicas: typeof spec.replicas === 'number' ? spec.replicas : null,
        // Only a single-container pod has one image tag to compare across sources.
        image_tag:
          containers.length === 1
            ? (parseImageRef(asString(containers[0]?.image) ?? '')?.tag ?? null)
            : null,
        // Likewise one container with one port has one container port to compare.
        container_port:
          containers.length === 1
            ? singlePort(
                asArray(containers[0]?.ports).map((p) =>
                  isRecord(p) && typeof p.containerPort === 'number' ? p.containerPort : null,
                ),
              )
            : null,
        containers: containers.map((c) => containerFacts(c, podSecurity)),
        init_containers: initContainers.map((c) => containerFacts(c, podSecurity)),
        labels: stringMap(meta.labels),
        pod_labels: w.podLabels,
        host_network: podSpec.hostNetwork === true,
        service_account: asString(podSpec.serviceAccountName),
        // The Dapr app id the sidecar registers the pods under: the name callers invoke.
        ...(appId ? { dapr_app_id: appId, ...(appId !== w.name ? { aliases: [appId] } : {}) } : {}),
      },
    }),
  ];
  const podAt = [...w.podPath, 'spec'];
  const resolve = cluster.resolver(w.namespace);
  let classified = false;
  for (const [group, list] of groups) {
    list.forEach((c, i) => {
      const cAt = [...podAt, group, i];
      const raw = asString(c.image);
      const image = raw ? parseImageRef(raw) : null;
      if (raw && image) {
        out.push(
          cite(w, [...cAt, 'image'], {
            kind: 'image-reference',
            subject,
            relationship: 'uses_image',
            object: imageKey(image),
            summary: `${label} container ${String(c.name)} runs image ${raw}`,
            attributes: {
              ...imageAttributes(image),
              container: asString(c.name),
              init: group === 'initContainers',
            },
          }),
        );
        // An image of no well-known engine (`acme/user-db`) is typed by the container's own
        // declaration: its port names and numbers, server-only variables (classifyDeclared).
        // An image the repository builds (compose, Skaffold) is what its Dockerfile is FROM.
        const fromBuild =
          group === 'containers' && !classified && !classifyImage(image)
            ? built(image, w.name, '\u0000')
            : null;
        const declared =
          group === 'containers' && !classified && !classifyImage(image) && !fromBuild
            ? classifyDeclared({
                ports: asArray(c.ports).map((p) =>
                  isRecord(p) && typeof p.containerPort === 'number' ? p.containerPort : '',
                ),
                portNames: asArray(c.ports).map((p) =>
                  isRecord(p) ? (asString(p.name) ?? '') : '',
                ),
                env: asArray(c.env).map((e) => (isRecord(e) ? (asString(e.name) ?? '') : '')),
              })
            : null;
        const cls =
          group === 'containers' && !classified
            ? (classifyImage(image) ?? fromBuild ?? declared)
            : null;
        const clue = cls === declared ? declared?.clue : cls === fromBuild ? fromBuild?.clue : null;
        if (cls) {
          classified = true;
          out.push(
            cite(w, [], {
              kind: cls.kind === 'datastore' ? 'datastore-declared' : 'queue-declared',
              subject: entityKey(cls.kind, w.name),
              summary: `${label} runs a ${cls.engine} ${cls.kind}${clue ? ` (${clue})` : ''}`,
              attributes: {
                engine: cls.engine,
                ...(clue ? { engine_clue: clue } : {}),
                tag: image.tag,
                service_key: subject,
                image: image.repo,
                workload_kind: w.kind,
              },
            }),
          );
        }
      }
      out.push(...containerEnv(w, c, cAt, label, subject, resolve, cluster));
    });
  }
  return out;
}

const INTERNAL_LB_ANNOTATIONS = [
  'service.beta.kubernetes.io/aws-load-balancer-internal',
  'service.beta.kubernetes.io/azure-load-balancer-internal',
  'networking.gke.io/load-balancer-type',
  'cloud.google.com/load-balancer-type',
];

function serviceEvidence(svc: K8sObject, cluster: Cluster): Evidence[] {
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

function ingressEvidence(ing: K8sObject, cluster: Cluster): Evidence[] {
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
    const target = cluster.serviceTarget(b.service, ing.namespace);
    const tls = host ? tlsHosts.has(host) : anyTls;
    out.push(
      cite(ing, path, {
        kind: 'ingress-route',
        subject,
        relationship: 'routes_to',
        object: target.key,
        summary: `Ingress ${ing.name} routes ${host ?? '*'}${asString(httpPath?.path) ?? ''} to service ${b.service}`,
        attributes: {
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
    const name = asString(b.service.name);
    const port = isRecord(b.service.port)
      ? (b.service.port.number ?? b.service.port.name ?? null)
      : null;
    return name ? { service: name, port } : null;
  }
  const name = asString(b.serviceName);
  return name ? { service: name, port: b.servicePort ?? null } : null;
}

function configMapEvidence(cm: K8sObject, cluster: Cluster): Evidence[] {
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
  const resolve = cluster.resolver(cm.namespace);
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

function secretEvidence(s: K8sObject): Evidence[] {
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
function networkPolicyEvidence(np: K8sObject, cluster: Cluster): Evidence[] {
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
