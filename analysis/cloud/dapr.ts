/**
 * Dapr components (`kind: Component`, apiVersion `dapr.io/...`), every building block
 * (docs/decisions.md, "Dapr components"):
 *
 * - state stores, configuration stores, lock stores and secret stores backed by a server are
 *   datastores; pub/sub components are queues; each named as the applications use it
 *   (`statestore`), with the engine its type names and the backing host its metadata gives;
 * - input/output bindings are typed by their binding type: a broker (`bindings.kafka`,
 *   `bindings.mqtt3`, `bindings.rabbitmq`, cloud queues) is a queue, a database
 *   (`bindings.postgresql`, `bindings.redis`...) a datastore, object storage a bucket; a binding
 *   to a system outside the sidecar (`bindings.smtp`, `bindings.http`, `bindings.twilio.sms`)
 *   names that system: the service its host resolves to, else `external:<host>` (else the
 *   component's name); a binding the sidecar serves itself (`bindings.cron`,
 *   `bindings.localstorage`) and platform secret stores (`secretstores.kubernetes`,
 *   `secretstores.local.*`) are no entity;
 * - `scopes` list the app ids allowed to use the component: each connects to it (`dapr-scope`).
 */
import { entityKey, type Evidence } from '../evidence';
import { asArray, asString, isRecord } from '../shared/values';
import { envReferences } from './env';
import { cite, type Cluster, type K8sObject } from './kubernetes-cluster';

type Target =
  { kind: 'datastore' | 'queue' | 'bucket'; engine: string } | { kind: 'system' } | null;

/** Implementations (the type after the building block) -> engine names. */
const ENGINES: [RegExp, string][] = [
  [/^redis$/, 'redis'],
  [/^(postgresql|postgres)(\.v\d+)?$/, 'postgres'],
  [/^mysql$/, 'mysql'],
  [/^mongodb$/, 'mongodb'],
  [/^cassandra$/, 'cassandra'],
  [/^memcached$/, 'memcached'],
  [/^sqlserver$/, 'mssql'],
  [/^(cockroachdb)$/, 'cockroachdb'],
  [/^kafka$/, 'kafka'],
  [/^rabbitmq$/, 'rabbitmq'],
  [/^(mqtt|mqtt3)$/, 'mqtt'],
  [/^(jetstream|natsstreaming)$/, 'nats'],
  [/^pulsar$/, 'pulsar'],
  [/^(azure\.servicebus(\.(queues|topics))?|azure\.servicebusqueues)$/, 'azure-service-bus'],
  [/^azure\.eventhubs$/, 'azure-event-hubs'],
  [/^azure\.storagequeues$/, 'azure-queue'],
  [/^azure\.eventgrid$/, 'azure-event-grid'],
  [/^aws\.snssqs$/, 'sqs'],
  [/^aws\.sqs$/, 'sqs'],
  [/^aws\.sns$/, 'sns'],
  [/^aws\.kinesis$/, 'kinesis'],
  [/^gcp\.pubsub$/, 'pubsub'],
  [/^aws\.dynamodb$/, 'dynamodb'],
  [/^azure\.cosmosdb$/, 'cosmosdb'],
  [/^azure\.tablestorage$/, 'azure-table'],
  [/^azure\.blobstorage$/, 'azure-blob'],
  [/^aws\.s3$/, 's3'],
  [/^gcp\.bucket$/, 'gcs'],
  [/^hashicorp\.vault$/, 'vault'],
  [/^azure\.keyvault$/, 'azure-key-vault'],
  [/^aws\.(secretmanager|parameterstore)$/, 'aws-secrets-manager'],
  [/^gcp\.secretmanager$/, 'gcp-secret-manager'],
  [/^azure\.appconfig$/, 'azure-app-configuration'],
];
const engineOf = (impl: string) => ENGINES.find(([re]) => re.test(impl))?.[1] ?? impl;

const BUCKETS = new Set(['azure-blob', 's3', 'gcs']);
const QUEUES = new Set([
  'kafka',
  'rabbitmq',
  'mqtt',
  'nats',
  'pulsar',
  'azure-service-bus',
  'azure-event-hubs',
  'azure-queue',
  'azure-event-grid',
  'sqs',
  'sns',
  'kinesis',
  'pubsub',
]);
/** Bindings the sidecar serves itself: no system behind them. */
const SIDECAR_BINDINGS = /^(cron|localstorage|kubernetes|wasm|dubbo)$/;
/** Bindings to a system reached over the network that is no datastore, queue or bucket. */
const SYSTEM_BINDINGS =
  /^(smtp|http|graphql|twilio\.(sms|sendgrid)|sendgrid|postmark|apns|alicloud\.\w+|huawei\.\w+|commercetools|zeebe\.\w+|rethinkdb\.statechange|azure\.signalr|azure\.openai)$/;
/** Secret stores of the platform or the sidecar's own host. */
const PLATFORM_SECRETS = /^(kubernetes|local\.(file|env))$/;

function targetOf(block: string, impl: string): Target {
  const engine = engineOf(impl);
  switch (block) {
    case 'state':
    case 'configuration':
    case 'lock':
      return { kind: 'datastore', engine };
    case 'pubsub':
      return { kind: 'queue', engine };
    case 'secretstores':
      return PLATFORM_SECRETS.test(impl) ? null : { kind: 'datastore', engine };
    case 'bindings':
      if (SIDECAR_BINDINGS.test(impl)) return null;
      if (SYSTEM_BINDINGS.test(impl)) return { kind: 'system' };
      if (BUCKETS.has(engine)) return { kind: 'bucket', engine };
      if (QUEUES.has(engine)) return { kind: 'queue', engine };
      if (engine !== impl || /^(redis|mysql|postgres)/.test(impl))
        return { kind: 'datastore', engine };
      return null;
    default:
      return null;
  }
}

/** Metadata items that hold the backing server's address. */
const HOST_ITEMS =
  /^(redisHost|host|brokers|connectionString|url|servers|natsURL|server|endpoint|vaultAddr)$/i;

const BLOCK_TEXT: Record<string, string> = {
  state: 'state store',
  pubsub: 'pub/sub',
  bindings: 'binding',
  secretstores: 'secret store',
  configuration: 'configuration store',
  lock: 'lock store',
};

/** The evidence of one Dapr component (module comment). */
export function daprComponentEvidence(c: K8sObject, cluster: Cluster): Evidence[] {
  const spec = isRecord(c.obj.spec) ? c.obj.spec : {};
  const type = asString(spec.type) ?? '';
  const [block = '', ...rest] = type.split('.');
  const impl = rest.join('.');
  const target = targetOf(block, impl);
  const resolve = cluster.resolver(c.namespace, c.file.path);
  const refs = asArray(spec.metadata)
    .filter(isRecord)
    .filter((m) => HOST_ITEMS.test(asString(m.name) ?? ''))
    .flatMap((m) => envReferences(`${asString(m.name) ?? ''}_HOST`, m.value, resolve, 'dapr'))
    .filter((r) => r.kind === 'env-reference' && typeof r.attributes.host === 'string');
  const hosts = refs.map((r) => String(r.attributes.host));
  const what = BLOCK_TEXT[block] ?? block;
  const scopes = asArray(c.obj.scopes).map(String);
  // A binding the sidecar serves itself, a platform secret store: nothing of the system's own.
  if (!target) return [];
  let subject: string;
  const out: Evidence[] = [];
  if (target.kind === 'system') {
    // The system the binding reaches: the service its host names, else that external host.
    subject = refs[0]?.object ?? entityKey('external', hosts[0] ?? c.name);
    out.push(
      cite(c, [], {
        kind: 'dapr-binding',
        subject,
        summary: `Dapr component ${c.name} (${type}) is a binding to ${hosts[0] ?? c.name}`,
        attributes: { dapr_type: type, component: c.name, namespace: c.namespace, scopes },
      }),
    );
  } else {
    subject = entityKey(target.kind, c.name);
    out.push(
      cite(c, [], {
        kind: `${target.kind}-declared`,
        subject,
        summary: `Dapr component ${c.name} (${type}) is a ${target.engine} ${what}${hosts.length ? ` at ${hosts.join(', ')}` : ''}`,
        attributes: {
          engine: target.engine,
          dapr_type: type,
          dapr_block: block,
          namespace: c.namespace,
          backing_hosts: hosts,
          scopes,
        },
      }),
    );
  }
  asArray(c.obj.scopes).forEach((app, i) => {
    const id = asString(app);
    if (!id) return;
    out.push(
      cite(c, ['scopes', i], {
        kind: 'dapr-scope',
        subject: entityKey('service', id),
        relationship: 'connects_to',
        object: subject,
        summary: `Dapr app ${id} is scoped to use component ${c.name} (${what})`,
        attributes: { component: c.name, dapr_type: type, app_id: id },
      }),
    );
  });
  return out;
}
