/**
 * Containers on the host network (docs/decisions.md, "A host-network container's localhost is
 * the host"). A compose service with `network_mode: host` shares the host's network stack: its
 * `localhost:<port>` is whatever listens on the host at that port, not the container itself.
 * Such an address (a `local-address` of its settings, a local URL its image's environment
 * sets) reaches the one unit listening there:
 *
 * - a compose service publishing that host port (`ports: ["5488:5488"]`);
 * - a unit on the host network whose own settings set its server port (`server.port`,
 *   `micronaut.server.port`, placeholders read as their defaults: analysis/code/local-addresses.ts);
 * - a container on the host network of a well-known server image at that image's default port
 *   (Consul 8500, Zipkin 9411, Vault 8200), a weaker inference capped lower.
 *
 * With none or several listeners nothing is drawn. A bridged container's `localhost` is itself:
 * its local addresses are never resolved this way. Stores (an engine's address) are resolved by
 * reconcile-local-stores.ts.
 */
import { keyKind } from './evidence';
import { addInferredConnection, type RelEntry, type StoredEvidence } from './reconcile-model';
import { LOCAL_STORE_CAP } from './reconcile-local-stores';
import { isLocalHost, parseHostPort } from './shared/urls';

/** Default ports of well-known server images (the last segment of the image repository). */
const IMAGE_PORTS: Record<string, number> = { consul: 8500, zipkin: 9411, vault: 8200 };
/** Cap of an edge inferred from an image's default port alone. */
export const IMAGE_PORT_CAP = 0.45;

interface Listener {
  target: string;
  ev: StoredEvidence[];
  cap: number;
}

/** The port a local URL or `host:port` names; null when it is not local or names no port. */
export function localPort(value: string): number | null {
  const url = /^(?:https?|wss?):\/\/([^/\s?#]+)(?:[/?#].*)?$/i.exec(value.trim());
  const hp = parseHostPort(url ? (url[1] ?? '') : value.trim());
  if (!hp || hp.port === null || !isLocalHost(hp.host)) return null;
  return hp.port;
}

/** The `connects_to` entries from host-network services to the one unit listening at a port. */
/**
 * The port a record says its unit calls on the loopback: a local address's port, or a loopback
 * URL a variable defaults to (`env-default`); null for anything else.
 */
export function loopbackPort(e: StoredEvidence): number | null {
  if (e.evidence_kind === 'local-address' && typeof e.attributes.port === 'number')
    return e.attributes.port;
  if (e.evidence_kind === 'env-default' && typeof e.attributes.default === 'string')
    return localPort(e.attributes.default);
  return null;
}

export function hostNetworkEdges(
  evidence: StoredEvidence[],
  relEvidence: Map<string, RelEntry>,
  rep: (key: string) => string,
  placed: (key: string) => boolean,
): Map<string, RelEntry> {
  const out = new Map<string, RelEntry>();
  const hostNetwork = new Map<string, StoredEvidence>();
  for (const e of evidence)
    if (
      e.provider === 'docker-compose' &&
      e.evidence_kind === 'service-declared' &&
      e.attributes.network_mode === 'host' &&
      placed(e.subject_key)
    )
      hostNetwork.set(rep(e.subject_key), e);
  if (hostNetwork.size === 0) return out;
  // Who listens on each host port.
  const listeners = new Map<number, Map<string, Listener>>();
  const listen = (port: number, target: string, ev: StoredEvidence, cap: number) => {
    const at = listeners.get(port) ?? new Map<string, Listener>();
    listeners.set(port, at);
    const l = at.get(target) ?? { target, ev: [], cap };
    l.cap = Math.max(l.cap, cap);
    if (!l.ev.includes(ev)) l.ev.push(ev);
    at.set(target, l);
  };
  for (const e of evidence) {
    if (!placed(e.subject_key)) continue;
    const target = rep(e.subject_key);
    if (e.provider === 'docker-compose' && e.evidence_kind === 'port-exposed') {
      const port = Number(e.attributes.published);
      if (Number.isInteger(port) && port > 0) listen(port, target, e, LOCAL_STORE_CAP);
    } else if (e.evidence_kind === 'listen-port' && e.attributes.in_test !== true) {
      if (hostNetwork.has(target) && typeof e.attributes.port === 'number')
        listen(e.attributes.port, target, e, LOCAL_STORE_CAP);
    }
  }
  for (const [target, e] of hostNetwork) {
    const image = e.attributes.image as { repo?: unknown } | null | undefined;
    const repo = typeof image?.repo === 'string' ? image.repo : '';
    const port = IMAGE_PORTS[repo.split('/').pop() ?? ''];
    if (port !== undefined) listen(port, target, e, IMAGE_PORT_CAP);
  }
  for (const e of evidence) {
    if (e.attributes.in_test === true || !placed(e.subject_key)) continue;
    const port = loopbackPort(e);
    if (port === null) continue;
    const source = rep(e.subject_key);
    if (!hostNetwork.has(source) || keyKind(source) !== 'service') continue;
    const found = [...(listeners.get(port)?.values() ?? [])].filter((l) => l.target !== source);
    // Listening on the port itself: the address is the unit's own.
    if (listeners.get(port)?.has(source)) continue;
    if (found.length !== 1) continue;
    const l = found[0]!;
    addInferredConnection(out, relEvidence, source, l.target, l.cap, [e, ...l.ev]);
  }
  return out;
}
