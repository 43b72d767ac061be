/**
 * Images that wrap an engine under a vendor's name (`eventuateio/eventuate-kafka`,
 * `acme/rs-mysql-db`, `bitnami/redis-cluster`): the last repository segment holds an engine's
 * name as a word. The tools around an engine hold its name too (`kafka-ui`, `mysql-exporter`,
 * `mongo-express`, `debezium-connect-postgresql`, `jaeger-cassandra-schema`), so the rule is
 * narrow: the engine word is the last word, or is followed only by words that still name the
 * server (`server`, `cluster`, `db`...), and no word before it names a tool that talks to it.
 */

/** Engine words (a version may follow: `mysql8`, `postgres16`). */
const ENGINE_WORDS: [RegExp, 'datastore' | 'queue', string][] = [
  [/^(postgres|postgresql|postgis|timescaledb)\d*$/, 'datastore', 'postgres'],
  [/^(mysql|percona)\d*$/, 'datastore', 'mysql'],
  [/^mariadb\d*$/, 'datastore', 'mariadb'],
  [/^(mongo|mongodb)\d*$/, 'datastore', 'mongodb'],
  [/^(redis|valkey|keydb)\d*$/, 'datastore', 'redis'],
  [/^memcached\d*$/, 'datastore', 'memcached'],
  [/^elasticsearch\d*$/, 'datastore', 'elasticsearch'],
  [/^opensearch\d*$/, 'datastore', 'opensearch'],
  [/^(cassandra|scylla)\d*$/, 'datastore', 'cassandra'],
  [/^rabbitmq\d*$/, 'queue', 'rabbitmq'],
  [/^kafka\d*$/, 'queue', 'kafka'],
  [/^nats\d*$/, 'queue', 'nats'],
  [/^redpanda\d*$/, 'queue', 'redpanda'],
  [/^(activemq|artemis)\d*$/, 'queue', 'activemq'],
];

/** Words after the engine's that still name its server. */
const SERVER_WORDS = new Set([
  'server',
  'cluster',
  'db',
  'database',
  'native',
  'stack',
  'community',
  'standalone',
  'ha',
  'oss',
  'ce',
  'enterprise',
  'alpine',
  'slim',
  'broker',
  'node',
]);

/** Words before the engine's that name a tool of it (a connector, an exporter, a UI...). */
const TOOL_WORDS =
  /^(connect|connector|connectors|debezium|cdc|exporter|prometheus|ui|gui|web|admin|commander|insight|express|proxy|backup|dump|sync|migrate|migrations?|init|setup|schema|client|cli|tools?|operator|to|from|kafdrop|akhq)$/;

/** The class of an image whose last repository segment wraps an engine; null when none does. */
export function wrappedEngine(
  last: string,
): { kind: 'datastore' | 'queue'; engine: string } | null {
  const words = last
    .toLowerCase()
    .split(/[-_.]+/)
    .filter(Boolean);
  for (let i = 0; i < words.length; i++) {
    const hit = ENGINE_WORDS.find(([re]) => re.test(words[i] ?? ''));
    if (!hit) continue;
    if (!words.slice(i + 1).every((w) => SERVER_WORDS.has(w) || /^\d+$/.test(w))) return null;
    if (words.slice(0, i).some((w) => TOOL_WORDS.test(w))) return null;
    return { kind: hit[1], engine: hit[2] };
  }
  return null;
}
