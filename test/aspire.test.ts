/**
 * Orchestration as code (.NET Aspire): an AppHost's resources and references read as deployment
 * declarations, project resources merged with their code units, and the client integrations of
 * the service projects corroborating the AppHost's edges. A small system written for this test.
 */
import test from 'ava';
import { analyzeFileMap } from './helpers/pipeline';
import { classifyClient } from '../analysis/code';
import type { Evidence } from '../analysis/evidence';
import type { Graph } from '../analysis/reconcile';

type Files = Record<string, string>;

const run = analyzeFileMap;

const SYSTEM: Files = {
  'src/Shop.AppHost/Shop.AppHost.csproj': `<Project Sdk="Microsoft.NET.Sdk">
  <Sdk Name="Aspire.AppHost.Sdk" Version="9.1.0" />
  <PropertyGroup><OutputType>Exe</OutputType><TargetFramework>net9.0</TargetFramework></PropertyGroup>
  <ItemGroup>
    <PackageReference Include="Aspire.Hosting.AppHost" Version="9.1.0" />
    <PackageReference Include="Aspire.Hosting.PostgreSQL" Version="9.1.0" />
    <ProjectReference Include="../Inventory.Api/Inventory.Api.csproj" />
    <ProjectReference Include="../Storefront/Storefront.csproj" />
  </ItemGroup>
</Project>`,
  'src/Shop.AppHost/Program.cs': `var builder = DistributedApplication.CreateBuilder(args);

// Backing resources.
var cache = builder.AddRedis("cache");
var stockDb = builder.AddPostgres("pg")
    .WithDataVolume()
    .AddDatabase("stockdb");
var bus = builder.AddRabbitMQ("messaging");

var inventory = builder.AddProject<Projects.Inventory_Api>("inventory-api")
    .WithReference(stockDb)
    .WithReference(bus)
    .WaitFor(stockDb);

var storefront = builder.AddProject<Projects.Storefront>("storefront")
    .WithReference(cache)
    .WithEnvironment("INVENTORY_URL", inventory.GetEndpoint("http"))
    .WaitFor(inventory)
    .WaitFor(bus);

builder.AddNpmApp("admin", "../admin-ui", "dev")
    .WithReference(inventory);

builder.Build().Run();
`,
  'src/Inventory.Api/Inventory.Api.csproj': `<Project Sdk="Microsoft.NET.Sdk.Web">
  <ItemGroup>
    <PackageReference Include="Aspire.Npgsql.EntityFrameworkCore.PostgreSQL" Version="9.1.0" />
    <PackageReference Include="Aspire.RabbitMQ.Client" Version="9.1.0" />
  </ItemGroup>
</Project>`,
  'src/Inventory.Api/Program.cs': `var builder = WebApplication.CreateBuilder(args);
builder.AddNpgsqlDbContext<StockContext>("stockdb");
builder.AddRabbitMQClient("messaging");
var app = builder.Build();
app.Run();
`,
  'src/Storefront/Storefront.csproj': `<Project Sdk="Microsoft.NET.Sdk.Web">
  <ItemGroup>
    <PackageReference Include="Aspire.StackExchange.Redis.OutputCaching" Version="9.1.0" />
  </ItemGroup>
</Project>`,
  'src/Storefront/Program.cs': `var builder = WebApplication.CreateBuilder(args);
builder.AddRedisOutputCache("cache");
builder.Services.AddHttpClient<StockClient>(c => c.BaseAddress = new("https+http://inventory-api"));
var app = builder.Build();
app.Run();
`,
  // A class library named like the broker resource: the queue stays, the library is no service.
  'src/Messaging/Messaging.csproj': '<Project Sdk="Microsoft.NET.Sdk"></Project>',
  'src/Messaging/Events.cs': 'namespace Messaging;\npublic record StockChanged(int Id);\n',
  'src/admin-ui/package.json': '{"name":"admin-ui","private":true,"scripts":{"dev":"vite"}}',
};

const kinds = (g: Graph, kind: string) =>
  g.entities
    .filter((e) => e.kind === kind)
    .map((e) => e.canonical_key)
    .sort();
const edges = (g: Graph) =>
  g.relationships
    .filter((r) => r.kind === 'connects_to')
    .map((r) => `${r.source_key}->${r.target_key}`)
    .sort();

test('an Aspire AppHost declares the services, datastores and queue of the system', async (t) => {
  const { graph } = await run(SYSTEM);
  t.deepEqual(kinds(graph, 'service'), [
    'service:admin',
    'service:inventory-api',
    'service:storefront',
  ]);
  t.deepEqual(kinds(graph, 'datastore'), ['datastore:cache', 'datastore:pg', 'datastore:stockdb']);
  t.deepEqual(kinds(graph, 'queue'), ['queue:messaging']);
  const engine = (key: string) => graph.entities.find((e) => e.canonical_key === key)?.attributes;
  t.is(engine('datastore:cache')?.engine, 'redis');
  t.is(engine('datastore:stockdb')?.engine, 'postgres');
  t.is(engine('datastore:stockdb')?.parent, 'datastore:pg');
  t.is(engine('queue:messaging')?.engine, 'rabbitmq');
  // The AppHost itself is no service.
  t.false(graph.entities.some((e) => /apphost/i.test(e.canonical_key)));
});

test('references and endpoint environment are connections; WaitFor is not', async (t) => {
  const { graph } = await run(SYSTEM);
  t.deepEqual(edges(graph), [
    'service:admin->service:inventory-api',
    'service:inventory-api->datastore:stockdb',
    'service:inventory-api->queue:messaging',
    'service:storefront->datastore:cache',
    'service:storefront->service:inventory-api',
  ]);
  // WaitFor(bus) on the storefront gives no edge to the queue.
  t.false(edges(graph).includes('service:storefront->queue:messaging'));
});

test('a project resource is its code unit; client integrations corroborate the AppHost', async (t) => {
  const { graph } = await run(SYSTEM);
  const inventory = graph.entities.find((e) => e.canonical_key === 'service:inventory-api');
  t.truthy(inventory);
  t.true((inventory?.attributes.aliases as string[]).includes('service:inventory.api'));
  const admin = graph.entities.find((e) => e.canonical_key === 'service:admin');
  t.true((admin?.attributes.aliases as string[]).includes('service:admin-ui'));
  const rel = (from: string, to: string) =>
    graph.relationships.find((r) => r.source_key === from && r.target_key === to);
  const paths = (from: string, to: string, ev: Evidence[]) => {
    const ids = new Set(rel(from, to)?.evidence_ids ?? []);
    return ev.filter((_, i) => ids.has(`e${i}`)).map((e) => e.location.path);
  };
  const { evidence } = await run(SYSTEM);
  t.deepEqual([...new Set(paths('service:inventory-api', 'datastore:stockdb', evidence))].sort(), [
    'src/Inventory.Api/Program.cs',
    'src/Shop.AppHost/Program.cs',
  ]);
  t.deepEqual([...new Set(paths('service:storefront', 'datastore:cache', evidence))].sort(), [
    'src/Shop.AppHost/Program.cs',
    'src/Storefront/Program.cs',
  ]);
  // Every relationship's evidence has a location.
  for (const r of graph.relationships)
    for (const id of r.evidence_ids) {
      const e = evidence[Number(id.slice(1))];
      t.truthy(e?.location.path, `${r.canonical_key} ${id}`);
      t.true((e?.location.start_line ?? 0) >= 1);
    }
});

test('AppHost forms: path projects, containers, storage children, YARP routes', async (t) => {
  const { graph } = await run({
    'AppHost/AppHost.csproj': `<Project Sdk="Aspire.AppHost.Sdk/13.0.0"></Project>`,
    'AppHost/AppHost.cs': `var builder = DistributedApplication.CreateBuilder(args);
var blobs = builder.AddAzureStorage("storage").RunAsEmulator().AddBlobs("images");
var search = builder.AddContainer("search", "docker.elastic.co/elasticsearch/elasticsearch", "8.15.0");
var worker = builder.AddProject("worker", "../Worker/Worker.csproj").WithReference(blobs);
var api = builder.AddContainer("api", "ghcr.io/acme/api").WithEnvironment("SEARCH", search);
var web = builder.AddContainer("web", "ghcr.io/acme/web")
    .WithEnvironment("API_BASE", $"{api.GetEndpoint("http")}/v1");
builder.AddYarp("gateway").WithConfiguration(yarp => {
    yarp.AddRoute("/api/{**catch-all}", api);
});
builder.AddYarp("bff").WithExternalHttpEndpoints().ConfigureBffRoutes(api, search).WaitFor(worker);
`,
    'Worker/Worker.csproj': '<Project Sdk="Microsoft.NET.Sdk.Worker"></Project>',
    'Worker/Program.cs':
      'var b = Host.CreateApplicationBuilder(args);\nb.AddAzureBlobClient("images");\n',
  });
  // The account runs as the Azurite emulator: a datastore, its blob container a store of it
  // (issue 23, session 15; an account in Azure keeps its children buckets).
  t.deepEqual(kinds(graph, 'bucket'), []);
  t.deepEqual(kinds(graph, 'datastore'), [
    'datastore:images',
    'datastore:search',
    'datastore:storage',
  ]);
  t.deepEqual(edges(graph), [
    'service:api->datastore:search',
    'service:bff->datastore:search',
    'service:bff->service:api',
    'service:gateway->service:api',
    'service:web->service:api',
    'service:worker->datastore:images',
  ]);
  t.false(graph.entities.some((e) => e.canonical_key === 'service:apphost'));
});

test('Aspire client packages are client libraries of their engines', (t) => {
  t.deepEqual(classifyClient('nuget', 'Aspire.Npgsql.EntityFrameworkCore.PostgreSQL'), {
    engine: 'postgres',
    category: 'datastore',
  });
  t.is(classifyClient('nuget', 'Aspire.StackExchange.Redis.OutputCaching')?.engine, 'redis');
  t.is(classifyClient('nuget', 'Aspire.RabbitMQ.Client')?.engine, 'rabbitmq');
  t.is(classifyClient('nuget', 'Aspire.Hosting.PostgreSQL'), null);
});

test('a file-based AppHost, statements inside if blocks and names held by constants', async (t) => {
  const { graph } = await run({
    'apphost.cs': `#:sdk Aspire.AppHost.Sdk@13.1.0
#:package Aspire.Hosting.Redis@13.1.0

var builder = DistributedApplication.CreateBuilder(args);
var pg = builder.AddPostgres("pg");
if (builder.ExecutionContext.IsRunMode)
{
    pg.WithDataVolume();
}
var ordersName = "Orders";
var orders = pg.AddDatabase(ordersName);
var api = builder.AddUvicornApp("api", "./api", "main:app").WithReference(orders);
`,
    'api/pyproject.toml': '[project]\nname = "api"\ndependencies = ["fastapi"]\n',
    'api/main.py': 'from fastapi import FastAPI\napp = FastAPI()\n',
  });
  t.deepEqual(kinds(graph, 'datastore'), ['datastore:orders', 'datastore:pg']);
  t.is(
    graph.entities.find((e) => e.canonical_key === 'datastore:orders')?.attributes.engine,
    'postgres',
  );
  t.deepEqual(edges(graph), ['service:api->datastore:orders']);
  t.deepEqual(kinds(graph, 'service'), ['service:api']);
});
