/**
 * Dapr secret stores holding connection strings: an application that loads a local-file secret
 * store as its configuration (`AddDaprSecretStore`) and reads a key of it, or fetches a secret
 * by name (`GetSecretAsync`), connects to the server that secret names, when the graph knows
 * that server. A small system written for this test.
 */
import test from 'ava';
import { classifyPath } from '../domain/audits/classify';
import { analyzeFiles, connections } from './helpers/pipeline';

const csproj = '<Project Sdk="Microsoft.NET.Sdk.Web"></Project>';

const SYSTEM: Record<string, string> = {
  'docker-compose.yml': `services:
  sqldata:
    image: mcr.microsoft.com/mssql/server:2019-latest
  orders-db:
    image: postgres:16
  catalog:
    build: src/catalog
  catalog-dapr:
    image: daprio/daprd:1.9.4
    network_mode: "service:catalog"
    command: ["./daprd", "-app-id", "catalog", "-components-path", "/components"]
    volumes:
      - "./dapr/components/:/components"
  reports:
    build: src/reports
  orders:
    build: src/orders
  payments:
    build: src/payments
`,
  'dapr/components/secretstore.yaml': `apiVersion: dapr.io/v1alpha1
kind: Component
metadata:
  name: shop-secretstore
spec:
  type: secretstores.local.file
  version: v1
  metadata:
  - name: secretsFile
    value: /components/shop-secrets.json
  - name: nestedSeparator
    value: ":"
`,
  'dapr/components/shop-secrets.json': `{
  "ConnectionStrings": {
    "CatalogDB": "Server=sqldata;Database=Catalog;User Id=sa;Password=Pass@word",
    "ReportsDB": "Server=warehouse;Database=Reports;User Id=sa;Password=Pass@word",
    "UnusedDB": "Server=orders-db;Database=Unused;User Id=sa;Password=Pass@word"
  },
  "orders-db": "Host=orders-db;Database=orders;Username=app;Password=secret"
}
`,
  'src/catalog/catalog.csproj': csproj,
  'src/catalog/Program.cs': `using Dapr.Client;
using Dapr.Extensions.Configuration;
const string SecretStore = "shop-secretstore";
var builder = WebApplication.CreateBuilder(args);
builder.Configuration.AddDaprSecretStore(SecretStore, new DaprClientBuilder().Build());
builder.Services.AddDbContext<CatalogContext>(o => o.UseSqlServer(builder.Configuration["ConnectionStrings:CatalogDB"]));
`,
  'src/reports/reports.csproj': csproj,
  'src/reports/Program.cs': `using Dapr.Extensions.Configuration;
var builder = WebApplication.CreateBuilder(args);
builder.Configuration.AddDaprSecretStore("shop-secretstore", new DaprClientBuilder().Build());
var cs = builder.Configuration.GetConnectionString("ReportsDB");
`,
  'src/payments/go.mod':
    'module example.com/payments\n\ngo 1.22\n\nrequire github.com/dapr/go-sdk v1.10.0\n',
  'src/payments/main.go': `package main

import dapr "github.com/dapr/go-sdk/client"

const secretStore = "shop-secretstore"

func dsn(ctx context.Context, client dapr.Client) map[string]string {
\tsecret, _ := client.GetSecret(ctx, secretStore, "orders-db", nil)
\treturn secret
}
`,
  'src/orders/orders.csproj': csproj,
  'src/orders/Db.cs': `using Dapr.Client;
class Db {
    async Task<string> ConnectionString(DaprClient dapr) {
        var secret = await dapr.GetSecretAsync("shop-secretstore", "orders-db");
        return secret["orders-db"];
    }
}
`,
};

test('a secrets file is read as deployment configuration', (t) => {
  t.is(classifyPath('dapr/components/shop-secrets.json'), 'cloud');
  t.is(classifyPath('manifests/local/secrets.json'), 'cloud');
});

test('an app reading a key of a Dapr local-file secret store connects to the server its value names', async (t) => {
  const files = Object.entries(SYSTEM).map(([path, text]) => ({ path, text }));
  const { graph, evidence } = await analyzeFiles(files);
  const e = connections(graph);
  const msg = e.join('\n');
  // The store loaded as configuration, the key read through the configuration.
  t.true(e.includes('service:catalog -> datastore:sqldata'), msg);
  // A secret fetched by name (.NET, and Go with the store named by a constant).
  t.true(e.includes('service:orders -> datastore:orders-db'), msg);
  t.true(e.includes('service:payments -> datastore:orders-db'), msg);
  // Must not: a key the app never reads (UnusedDB), a host the graph does not know (warehouse).
  t.false(e.includes('service:catalog -> datastore:orders-db'), msg);
  t.false(
    e.some((x) => x.startsWith('service:reports ->')),
    msg,
  );
  const held = evidence.find(
    (x) =>
      x.evidence_kind === 'dapr-secret-host' && x.attributes.key === 'ConnectionStrings:CatalogDB',
  )!;
  t.is(held.location.path, 'dapr/components/shop-secrets.json');
  t.is(held.location.start_line, 3);
  t.is(held.attributes.host, 'sqldata');
  // The secret's value (its password) is never kept.
  t.false(evidence.some((x) => JSON.stringify([x.summary, x.attributes]).includes('Pass@word')));
});

/** A store a vault serves when deployed and a local file serves in local runs (one name, two types). */
const VAULTED: Record<string, string> = {
  'deploy/sql.yaml': `apiVersion: apps/v1
kind: Deployment
metadata: { name: sql }
spec:
  template:
    spec:
      containers:
        - { name: sql, image: "mcr.microsoft.com/mssql/server:2019-latest" }
`,
  'deploy/ledger.yaml': `apiVersion: apps/v1
kind: Deployment
metadata: { name: ledger }
spec:
  template:
    spec:
      containers:
        - { name: ledger, image: "acme/ledger:1" }
`,
  'deploy/components/secretstore.yaml': `apiVersion: dapr.io/v1alpha1
kind: Component
metadata:
  name: shop-secretstore
spec:
  type: secretstores.azure.keyvault
  version: v1
  metadata:
  - name: vaultName
    value: shop-kv
`,
  'local/secretstore.yaml': `apiVersion: dapr.io/v1alpha1
kind: Component
metadata:
  name: shop-secretstore
spec:
  type: secretstores.local.file
  version: v1
  metadata:
  - name: secretsFile
    value: ./local/secrets.json
`,
  'local/secrets.json': `{
  "ledger-sql": "Data Source=my-laptop-sql;Initial Catalog=ledger;User Id=sa;Password=Pass@word"
}
`,
  'src/ledger/ledger.csproj': csproj,
  'src/ledger/Db.cs': `using Dapr.Client;
class Db {
    async Task<string> ConnectionString(DaprClient dapr) {
        var secret = await dapr.GetSecretAsync("shop-secretstore", "ledger-sql");
        return secret["ledger-sql"];
    }
}
`,
  'src/ledger/Dockerfile': 'FROM mcr.microsoft.com/dotnet/aspnet:8.0\nCOPY . /app\n',
};

test('a local secrets file standing in for a vault: an unknown host reaches the one store of its engine, weakly', async (t) => {
  const files = (m: Record<string, string>) =>
    Object.entries(m).map(([path, text]) => ({ path, text }));
  const { graph } = await analyzeFiles(files(VAULTED));
  const rel = graph.relationships.find(
    (r) => r.kind === 'connects_to' && r.target_key === 'datastore:sql',
  );
  t.truthy(rel, connections(graph).join('\n'));
  t.true(Number(rel!.confidence) < 0.5, rel!.confidence);
  // Two stores of the engine: which one is unknown.
  const two = await analyzeFiles(
    files({
      ...VAULTED,
      'deploy/sql2.yaml': VAULTED['deploy/sql.yaml']!.replace(/name: sql\b/g, 'name: sql2'),
    }),
  );
  t.false(
    connections(two.graph).some((c) => c.endsWith('datastore:sql') || c.endsWith('datastore:sql2')),
    connections(two.graph).join('\n'),
  );
  // No vault of that name: the file is the store's only definition, its unknown host names nothing.
  const fileOnly = Object.fromEntries(
    Object.entries(VAULTED).filter(([p]) => p !== 'deploy/components/secretstore.yaml'),
  );
  const plain = await analyzeFiles(files(fileOnly));
  t.false(
    connections(plain.graph).some((c) => c.endsWith('datastore:sql')),
    connections(plain.graph).join('\n'),
  );
});
