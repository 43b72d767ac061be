/**
 * Services run on the developer's machine (docs/decisions.md, "A loopback port another local-run
 * service listens on"). A repository whose units are started one by one on the host (`mvn
 * spring-boot:run`, `npm start`), with no deployment (compose, Kubernetes, Helm...) running
 * them, shares one network stack between them: a unit's settings that say
 * `http://localhost:8081/api` reach whatever listens on the host at port 8081, which is the unit
 * whose own settings set its server port to 8081 (`server.port: 8081`,
 * analysis/code/local-addresses.ts).
 *
 * An edge is drawn from a service no deployment runs to the one other such service listening on
 * the port its local address (a `local-address` of its settings, a local URL default of an
 * environment read) names. With none or several listeners nothing is drawn; a unit listening on
 * the port itself is reaching itself. A service a deployment runs is left to that deployment's
 * rules (inside a container `localhost` is the container; on the host network,
 * reconcile-host-network.ts). A Dockerfile alone runs nothing: it builds an image.
 */
import { keyKind } from './evidence';
import { loopbackPort } from './reconcile-host-network';
import { addInferredConnection, type RelEntry, type StoredEvidence } from './reconcile-model';

/** Confidence cap of such an edge: a developer's port, not an address naming the unit. */
export const LOCAL_RUN_CAP = 0.5;

/** Units some deployment runs: the subjects of any deployment record but a Dockerfile's. */
export function deployedUnits(
  evidence: StoredEvidence[],
  rep: (key: string) => string,
): Set<string> {
  const deployed = new Set<string>();
  for (const e of evidence)
    if (e.source_type === 'cloud' && e.provider !== 'dockerfile') deployed.add(rep(e.subject_key));
  return deployed;
}

/** The `connects_to` entries between services no deployment runs, by a loopback port. */
export function localRunEdges(
  evidence: StoredEvidence[],
  relEvidence: Map<string, RelEntry>,
  rep: (key: string) => string,
  placed: (key: string) => boolean,
): Map<string, RelEntry> {
  const out = new Map<string, RelEntry>();
  const deployed = deployedUnits(evidence, rep);
  const localRun = (key: string) => keyKind(key) === 'service' && !deployed.has(key);
  // Who listens on each port: the local-run services whose settings set their server port.
  const listeners = new Map<number, Map<string, StoredEvidence[]>>();
  for (const e of evidence) {
    if (e.evidence_kind !== 'listen-port' || e.attributes.in_test === true) continue;
    if (typeof e.attributes.port !== 'number' || !placed(e.subject_key)) continue;
    const target = rep(e.subject_key);
    if (!localRun(target)) continue;
    const at = listeners.get(e.attributes.port) ?? new Map<string, StoredEvidence[]>();
    listeners.set(e.attributes.port, at);
    at.set(target, [...(at.get(target) ?? []), e]);
  }
  if (listeners.size === 0) return out;
  for (const e of evidence) {
    if (e.attributes.in_test === true || !placed(e.subject_key)) continue;
    const port = loopbackPort(e);
    if (port === null) continue;
    const at = listeners.get(port);
    if (!at) continue;
    const source = rep(e.subject_key);
    // Listening on the port itself: the address is the unit's own.
    if (!localRun(source) || at.has(source) || at.size !== 1) continue;
    const [target, ev] = [...at][0]!;
    addInferredConnection(out, relEvidence, source, target, LOCAL_RUN_CAP, [e, ...ev]);
  }
  return out;
}
