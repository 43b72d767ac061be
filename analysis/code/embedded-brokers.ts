/**
 * Embedded brokers (docs/decisions.md, "Embedded brokers"): a program that starts a message
 * broker inside its own process (ActiveMQ's `new BrokerService()` / `BrokerFactory.createBroker`,
 * Artemis' `EmbeddedActiveMQ` / `EmbeddedJMS`, the NATS server's `server.NewServer`, the Aedes
 * or Moquette MQTT brokers) in its main code hosts a network broker other programs reach on the
 * broker's ports: a queue of that engine, keyed by its engine like a broker known only by its
 * address (`queue:activemq`), `embedded: true`, with the host service as `host`. The host
 * connects to it (it creates and uses it). Its ports are the connector addresses the unit's code
 * and settings write with a broker scheme (`tcp://0.0.0.0:61616`, `stomp://0.0.0.0:61613`),
 * plus the engine's default ports. Another unit's address naming the host service at one of
 * those ports is a connection to the broker, not to the host's API
 * (analysis/reconcile-embedded-brokers.ts).
 *
 * Tests are never read (a broker a test starts is the test's), nor commented-out lines; a unit
 * that is no service (a library, a test suite) hosts nothing.
 */
import { entityKey, type Evidence, type SourceFile } from '../evidence';
import { evidence } from '../shared/evidence';
import { LineIndex } from '../shared/text';
import { isTestPath, languageOf } from './common';
import type { CodeModel, Unit } from './model';

const MAX_CHARS = 1_000_000;
const SETTINGS = /\.(ya?ml|json|properties|toml|ini|cfg|conf|env|xml)$/i;

interface Form {
  /** The statement starting the broker. */
  re: RegExp;
  /** The library's package, which the same file must import or name. */
  library: RegExp;
  engine: string;
}

const FORMS: Form[] = [
  {
    re: /\bnew\s+BrokerService\s*\(|\bBrokerFactory\s*\.\s*createBroker\s*\(/g,
    library: /\borg\.apache\.activemq\b/,
    engine: 'activemq',
  },
  {
    re: /\bnew\s+Embedded(?:ActiveMQ|JMS)\s*\(/g,
    library: /\borg\.apache\.activemq\.artemis\b/,
    engine: 'activemq',
  },
  {
    re: /\bserver\s*\.\s*NewServer\s*\(/g,
    library: /"github\.com\/nats-io\/nats-server(?:\/v\d+)?\/server"/,
    engine: 'nats',
  },
  {
    re: /\brequire\s*\(\s*['"]aedes['"]\s*\)|\bfrom\s+['"]aedes['"]/g,
    library: /['"]aedes['"]/,
    engine: 'mqtt',
  },
  {
    re: /\bnew\s+Server\s*\(\s*\)/g,
    library: /\bio\.moquette\.broker\b/,
    engine: 'mqtt',
  },
];

/** Ports a client of the engine uses when none is written. */
export const ENGINE_PORTS: Record<string, number[]> = {
  // OpenWire, STOMP, AMQP, MQTT, WebSocket.
  activemq: [61616, 61613, 5672, 1883, 61614],
  nats: [4222],
  mqtt: [1883, 8883],
};

/** A connector's bind address: a broker protocol's scheme, a local or wildcard host, a port. */
const CONNECTORS =
  /\b((?:tcp|nio|ssl|stomp|amqp|amqps|mqtt|auto|nats)(?:\+\w+)?):\/\/(?:0\.0\.0\.0|localhost|127\.0\.0\.1|\[::\]):(\d{2,5})\b/g;

function scannable(path: string): boolean {
  return !isTestPath(path) && (languageOf(path) !== null || SETTINGS.test(path));
}

/** `queue-declared` (embedded, hosted) and `embedded-broker` evidence of every service unit. */
export function embeddedBrokerEvidence(model: CodeModel): Evidence[] {
  const out: Evidence[] = [];
  for (const unit of model.units) {
    if (unit.unitClass !== undefined && unit.unitClass !== 'service') continue;
    out.push(...unitBrokers(unit, model.filesByUnit.get(unit.key) ?? []));
  }
  return out;
}

function unitBrokers(unit: Unit, files: SourceFile[]): Evidence[] {
  const found = new Map<string, { file: SourceFile; line: number; form: string }>();
  const written: number[] = [];
  for (const file of files) {
    if (!scannable(file.path) || file.text.length > MAX_CHARS) continue;
    const idx = new LineIndex(file.text);
    const uncommented = (at: number) =>
      !/^\s*(\/\/|#|\*|<!--)/.test(file.text.slice(idx.lineStart(idx.lineAt(at)), at));
    for (const m of file.text.matchAll(CONNECTORS))
      if (uncommented(m.index ?? 0)) written.push(Number(m[2]));
    if (languageOf(file.path) === null) continue;
    for (const form of FORMS) {
      if (found.has(form.engine) || !form.library.test(file.text)) continue;
      for (const m of file.text.matchAll(form.re)) {
        if (!uncommented(m.index ?? 0)) continue;
        found.set(form.engine, { file, line: idx.lineAt(m.index ?? 0), form: m[0].trim() });
        break;
      }
    }
  }
  const out: Evidence[] = [];
  for (const [engine, at] of [...found].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const key = entityKey('queue', engine);
    const ports = [...new Set([...written, ...(ENGINE_PORTS[engine] ?? [])])].sort((a, b) => a - b);
    const span = { start: at.line, end: at.line };
    out.push(
      evidence(at.file, span, {
        source: 'code',
        provider: 'embedded-broker',
        kind: 'queue-declared',
        subject: key,
        summary: `${unit.name} starts an embedded ${engine} broker in its own process (${at.form}), listening on ${ports.join(', ')}`,
        attributes: { engine, embedded: true, host: unit.key, ports },
      }),
      evidence(at.file, span, {
        source: 'code',
        provider: 'embedded-broker',
        kind: 'embedded-broker',
        subject: unit.key,
        relationship: 'connects_to',
        object: key,
        summary: `${unit.name} hosts and uses its embedded ${engine} broker`,
        attributes: { engine, embedded: true },
      }),
    );
  }
  return out;
}
