/**
 * Dapr, every building block: state stores, pub/sub, input and output bindings typed by their
 * binding type, secret and configuration stores, each with its `scopes`; service invocation by
 * SDK and over HTTP. A small system written for this test (Kubernetes manifests, components,
 * and the services' code).
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import type { Graph } from '../analysis/reconcile';
import { stringConstants } from '../analysis/code/string-constants';
import { analyzeFiles } from './helpers/pipeline';

const edges = (g: Graph) => g.relationships.map((r) => `${r.source_key} -> ${r.target_key}`);

const deployment = (name: string, image: string, appId?: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  selector:
    matchLabels: { app: ${name} }
  template:
    metadata:
      labels: { app: ${name} }
${appId ? `      annotations:\n        dapr.io/enabled: "true"\n        dapr.io/app-id: ${appId}\n` : ''}    spec:
      containers:
        - name: ${name}
          image: ${image}
---
apiVersion: v1
kind: Service
metadata:
  name: ${name}
spec:
  selector: { app: ${name} }
  ports: [{ port: 80 }]
`;

const component = (
  name: string,
  type: string,
  metadata: Record<string, string>,
  scopes: string[],
) =>
  `apiVersion: dapr.io/v1alpha1
kind: Component
metadata:
  name: ${name}
spec:
  type: ${type}
  version: v1
  metadata:
${Object.entries(metadata)
  .map(([k, v]) => `    - name: ${k}\n      value: "${v}"`)
  .join('\n')}
scopes:
${scopes.map((s) => `  - ${s}`).join('\n')}
`;

const SYSTEM: Record<string, string> = {
  'deploy/ordering.yaml': deployment('ordering', 'shop/ordering:1', 'ordering-api'),
  'deploy/notify.yaml': deployment('notify', 'shop/notify:1', 'notify-api'),
  'deploy/sensors.yaml': deployment('sensors', 'shop/sensors:1', 'sensors-api'),
  'deploy/maildev.yaml': deployment('maildev', 'maildev/maildev:2'),
  'deploy/mosquitto.yaml': deployment('mosquitto', 'eclipse-mosquitto:2'),
  'dapr/statestore.yaml': component('orderstate', 'state.redis', { redisHost: 'redis:6379' }, [
    'ordering-api',
  ]),
  'dapr/pubsub.yaml': component('events', 'pubsub.rabbitmq', { host: 'amqp://rabbit:5672' }, [
    'ordering-api',
    'notify-api',
  ]),
  'dapr/sendmail.yaml': component('sendmail', 'bindings.smtp', { host: 'maildev', port: '25' }, [
    'notify-api',
  ]),
  'dapr/telemetry.yaml': component(
    'telemetry',
    'bindings.mqtt3',
    { url: 'tcp://mosquitto:1883', topic: 'readings' },
    ['sensors-api'],
  ),
  'dapr/archive.yaml': component(
    'archive',
    'bindings.postgresql',
    { url: 'host=archive-db user=a dbname=x' },
    ['sensors-api'],
  ),
  'dapr/nightly.yaml': component('nightly', 'bindings.cron', { schedule: '@daily' }, [
    'sensors-api',
  ]),
  'dapr/k8s-secrets.yaml': component('kubesecrets', 'secretstores.kubernetes', {}, [
    'ordering-api',
  ]),
  'dapr/vault.yaml': component(
    'vault',
    'secretstores.hashicorp.vault',
    { vaultAddr: 'https://vault:8200' },
    ['ordering-api'],
  ),
  'dapr/settings.yaml': component('appconfig', 'configuration.redis', { redisHost: 'redis:6379' }, [
    'notify-api',
  ]),
  'ordering/pom.xml': `<project><modelVersion>4.0.0</modelVersion><groupId>s</groupId><artifactId>ordering</artifactId><version>1</version>
<dependencies><dependency><groupId>io.dapr</groupId><artifactId>dapr-sdk</artifactId></dependency></dependencies></project>`,
  'ordering/src/main/java/s/Checkout.java': `package s;
import io.dapr.client.DaprClient;
class Checkout {
  void run(DaprClient client) {
    client.invokeMethod("notify-api", "notify", order, HttpExtension.POST).block();
  }
}
`,
  'notify/package.json': JSON.stringify({
    name: 'notify',
    dependencies: { '@dapr/dapr': '3.0.0' },
  }),
  'notify/index.js': `// Calls the sensors app through the Dapr sidecar.
const res = await fetch('http://localhost:3500/readings', { headers: { 'dapr-app-id': 'sensors-api' } });
`,
};

const files = (m: Record<string, string>): SourceFile[] =>
  Object.entries(m).map(([path, text]) => ({ path, text }));

test('every Dapr building block with its scopes, bindings typed by their binding type', async (t) => {
  const { graph } = await analyzeFiles(files(SYSTEM));
  const e = edges(graph);
  const msg = e.join('\n');
  const entity = (k: string) => graph.entities.find((x) => x.canonical_key === k);
  // State store and pub/sub, as before.
  t.true(e.includes('service:ordering -> datastore:orderstate'), msg);
  t.true(e.includes('service:notify -> queue:events'), msg);
  // Output binding to SMTP: the mail server the host names (a mail catcher image: a datastore), not an invented entity.
  t.true(e.includes('service:notify -> datastore:maildev'), msg);
  t.is(entity('datastore:sendmail'), undefined);
  // An MQTT binding is a queue (the broker), a PostgreSQL binding a datastore.
  t.true(e.includes('service:sensors -> queue:telemetry'), msg);
  t.is(entity('queue:telemetry')?.attributes.engine, 'mqtt');
  t.true(e.includes('service:sensors -> datastore:archive'), msg);
  t.is(entity('datastore:archive')?.attributes.engine, 'postgres');
  // Secret and configuration stores backed by a server.
  t.true(e.includes('service:ordering -> datastore:vault'), msg);
  t.true(e.includes('service:notify -> datastore:appconfig'), msg);
  // Must not: a cron binding or the platform's secret store as an entity.
  const keys = graph.entities.map((x) => x.canonical_key);
  t.false(
    keys.some((k) => /nightly|kubesecrets/.test(k)),
    keys.join(', '),
  );
  // Service invocation: the Java SDK's invokeMethod and the HTTP `dapr-app-id` header.
  t.true(e.includes('service:ordering -> service:notify'), msg);
  t.true(e.includes('service:notify -> service:sensors'), msg);
});

test('a Dapr app id or component named by a string constant of the file is read from the constant, never the method name after it', async (t) => {
  const csproj = '<Project Sdk="Microsoft.NET.Sdk.Web"></Project>';
  const { graph, evidence } = await analyzeFiles(
    files({
      'customers/customers.csproj': csproj,
      'customers/Worker.cs': `using Dapr.Client;
class Worker {
    private const string OrderServiceAppId = "order-service";
    async Task Run(DaprClient client, Order order) {
        var request = client.CreateInvokeMethodRequest<Order>(OrderServiceAppId, "order", order);
        var items = await client.InvokeMethodAsync<List<Item>>(HttpMethod.Get, OrderServiceAppId, $"items/{order.Id}");
    }
}
`,
      'payment/payment.csproj': csproj,
      'payment/EventsController.cs': `using Dapr;
public class EventsController : ControllerBase
{
    private const string PUBSUB_NAME = "shop-pubsub";

    [Topic(PUBSUB_NAME, nameof(OrderPaid))]
    public Task Handle(OrderPaid e) => Task.CompletedTask;
}
`,
      'shipping/go.mod':
        'module example.com/shipping\n\ngo 1.22\n\nrequire github.com/dapr/go-sdk v1.10.0\n',
      'shipping/main.go': `package main

import dapr "github.com/dapr/go-sdk/client"

func reserve(client dapr.Client) {
\tclient.InvokeMethod(context.Background(), "inventory", "reserve", "post")
}
`,
      'billing/billing.csproj': csproj,
      'billing/Billing.cs': `using Dapr.Client;
class Billing {
    // Not a constant: a field assigned at run time names nothing.
    private string target = Environment.GetEnvironmentVariable("TARGET");
    async Task Run(DaprClient client) => await client.InvokeMethodAsync(target, "charge");
}
`,
    }),
  );
  const e = edges(graph);
  const msg = e.join('\n');
  t.true(e.includes('service:customers -> service:order-service'), msg);
  // A context before the app id is skipped (Go).
  t.true(e.includes('service:shipping -> service:inventory'), msg);
  // Must not: the method name ("order", "charge") taken for the app id.
  t.false(
    graph.entities.some(
      (x) => x.canonical_key === 'service:order' || x.canonical_key === 'service:charge',
    ),
    graph.entities.map((x) => x.canonical_key).join(', '),
  );
  t.true(e.includes('service:payment -> queue:shop-pubsub'), msg);
  t.false(
    e.some((x) => x.startsWith('service:billing ->')),
    msg,
  );
  const cited = evidence.find(
    (x) => x.subject_key === 'service:payment' && x.object_key === 'queue:shop-pubsub',
  );
  t.is(cited?.attributes.constant, 'PUBSUB_NAME');
  t.is(cited?.location.start_line, 6);
});

test('string constants of a file: constant declarations and module constants, never a name given two values', (t) => {
  const c = stringConstants(`
    private const string OrderApp = "order-service";
    static readonly string Store = "shop.secretstore";
    public static final String TOPIC = "orders";
    const pubsubName = 'pubsub';
    val stateStore = "statestore"
PUBSUB_NAME = "events"
    string notConstant = "x";
    const string Twice = "a";
    const string Twice = "b";
    const string Built = $"{prefix}-app";
  `);
  t.deepEqual(Object.fromEntries(c), {
    OrderApp: 'order-service',
    Store: 'shop.secretstore',
    TOPIC: 'orders',
    pubsubName: 'pubsub',
    stateStore: 'statestore',
    PUBSUB_NAME: 'events',
  });
});
