/**
 * Connections to an embedded broker (docs/decisions.md, "Embedded brokers"). A service that
 * starts a broker in its own process (analysis/code/embedded-brokers.ts: a `queue-declared`
 * record with `embedded: true`, `host` and `ports`) answers on two kinds of port: its API's and
 * the broker's. Another unit's address naming the host service is a connection to the broker,
 * not to the host's API, when it says so:
 *
 * - its port is one of the broker's (a connector written in the host's settings, or the engine's
 *   default port: `tcp://policy-management-backend:61616`);
 * - it has no port and its scheme is one of the engine's protocols (`failover:`, `stomp://`,
 *   `amqp://` for ActiveMQ, `nats://`, `mqtt://`);
 * - it has no port and no scheme (a bare host) and the variable holding it names the engine or a
 *   broker (`ACTIVEMQ_HOST=policy-management-backend`).
 *
 * Any other address of the host (its HTTP port, a bare host in a neutral variable) stays a
 * call to the host service. Only records whose object is the host's own key are read: a name
 * another deployment gives the host (a Kubernetes Service in front of it) is not followed.
 */
import type { StoredEvidence } from './reconcile-model';

interface Broker {
  key: string;
  engine: string;
  host: string;
  ports: number[];
}

const SCHEMES: Record<string, RegExp> = {
  activemq: /^(?:failover|tcp|nio|ssl|stomp|stomp\+\w+|amqp|amqps|mqtt|auto|openwire)$/i,
  nats: /^(?:nats|tls)$/i,
  mqtt: /^(?:mqtt|mqtts|tcp|ssl)$/i,
};

const VARIABLE_WORDS: Record<string, RegExp> = {
  activemq: /activemq|artemis|amq|jms|stomp|openwire|broker/i,
  nats: /nats/i,
  mqtt: /mqtt|broker/i,
};

function brokersOf(evidence: StoredEvidence[]): Map<string, Broker[]> {
  const byHost = new Map<string, Broker[]>();
  for (const e of evidence) {
    const a = e.attributes;
    if (e.evidence_kind !== 'queue-declared' || a.embedded !== true) continue;
    if (typeof a.host !== 'string' || typeof a.engine !== 'string' || !Array.isArray(a.ports))
      continue;
    const b: Broker = {
      key: e.subject_key,
      engine: a.engine,
      host: a.host,
      ports: a.ports.filter((p): p is number => typeof p === 'number'),
    };
    byHost.set(b.host, [...(byHost.get(b.host) ?? []), b]);
  }
  return byHost;
}

/** The port written in an address value (`host:61616`, `tcp://host:61616?x`), or null. */
function portOf(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const m = /:(\d{2,5})(?:[/?)]|$)/.exec(value);
  return m ? Number(m[1]) : null;
}

/** The broker an address of the host reaches, or null (a call to the host itself). */
function reachedBroker(e: StoredEvidence, brokers: Broker[]): Broker | null {
  const a = e.attributes;
  const port = typeof a.port === 'number' ? a.port : portOf(a.value);
  const scheme = typeof a.scheme === 'string' && a.scheme !== '' ? a.scheme : null;
  const variable = typeof a.variable === 'string' ? a.variable : '';
  const matching = brokers.filter((b) =>
    port !== null
      ? b.ports.includes(port)
      : scheme !== null
        ? (SCHEMES[b.engine]?.test(scheme) ?? false)
        : (VARIABLE_WORDS[b.engine]?.test(variable) ?? false),
  );
  return matching.length === 1 ? matching[0]! : null;
}

/** The records, with each address of an embedded broker's host that reaches the broker retargeted. */
export function retargetEmbeddedBrokers(evidence: StoredEvidence[]): StoredEvidence[] {
  const byHost = brokersOf(evidence);
  if (byHost.size === 0) return evidence;
  return evidence.map((e) => {
    if (e.relationship_kind !== 'connects_to' || !e.object_key) return e;
    const brokers = byHost.get(e.object_key);
    if (!brokers || e.subject_key === e.object_key) return e;
    const broker = reachedBroker(e, brokers);
    if (!broker) return e;
    return {
      ...e,
      object_key: broker.key,
      summary: `${e.summary} (the ${broker.engine} broker embedded in ${broker.host})`,
      attributes: { ...e.attributes, embedded_broker_host: broker.host },
    };
  });
}
