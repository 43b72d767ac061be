/**
 * Kubernetes manifests (multi-document YAML, `kind: List`): workloads, Services, Ingresses,
 * ConfigMaps and Secrets. Service DNS names in env values resolve to the workload the Service
 * selects, so `redis-cart.default.svc.cluster.local:6379` becomes `service:redis-cart`.
 */
import { entityKey, type AnalyzerOutput, type Evidence, type SourceFile } from '../evidence';
import { imageAttributes, imageKey, parseImageRef } from '../shared/images';
import { asArray, asString, isRecord } from '../shared/values';
import { classifyDeclared, classifyImage, singlePort, storeDeclared } from './common';
import type { BuiltEngine } from './built-images';
import { daprComponentEvidence } from './dapr';
import { containerEnv } from './kubernetes-env';
import {
  Cluster,
  readManifests,
  stringMap,
  type K8sObject,
  type Obj,
  type Workload,
} from './kubernetes-cluster';
import { cite } from './kubernetes-cluster';
import {
  configMapEvidence,
  ingressEvidence,
  networkPolicyEvidence,
  secretEvidence,
  serviceEvidence,
} from './kubernetes-objects';

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
    // What the container starts instead of the image's entrypoint (one image, many programs).
    command: asArray(c.command).length > 0 ? asArray(c.command).map(String) : null,
    idle: isIdle(c),
  };
}

/** `sleep 365d`, `sleep infinity`, `tail -f /dev/null`, maybe through `sh -c`: only waits. */
const IDLE =
  /^(?:(?:\/usr)?\/bin\/)?(?:(?:ba|da|a)?sh\s+-c\s+)?["']?(?:sleep\s+(?:infinity|inf|\d+[smhd]?)|tail\s+-f\s+\/dev\/null)["']?$/;

/** A container whose command and arguments only wait: a toolbox someone execs into. */
function isIdle(c: Obj): boolean {
  const words = [...asArray(c.command), ...asArray(c.args)].map(String).join(' ').trim();
  return IDLE.test(words);
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
  const resolve = cluster.resolver(w.namespace, w.file.path);
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
          const store = storeDeclared(cls, clue, image, subject, label, w.name);
          out.push(
            cite(w, [], {
              ...store,
              attributes: { ...store.attributes, workload_kind: w.kind },
            }),
          );
        }
      }
      out.push(...containerEnv(w, c, cAt, label, subject, resolve, cluster));
    });
  }
  return out;
}
