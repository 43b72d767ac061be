/**
 * A dotted host that a deployment declares (a compose service `catalog.api`, its `hostname`) is
 * that deployable, not an Internet host: a YARP gateway's clusters reach the compose services
 * (analysis/reconcile.ts, step 2b). And an embedded SQLite store is also known by the file its
 * connection string opens (`Data Source=discountdb`), when it alone is called that.
 */
import test from 'ava';
import { analyzeFileMap, connections } from './helpers/pipeline';

const COMPOSE = `services:
  catalog.api:
    build: { context: ., dockerfile: Catalog.API/Dockerfile }
  basket.api:
    build: { context: ., dockerfile: Basket.API/Dockerfile }
  search:
    image: acme/search:1
    hostname: search.local
  gateway:
    build: { context: ., dockerfile: Gateway/Dockerfile }
`;

const csproj = (pkg = '') =>
  `<Project Sdk="Microsoft.NET.Sdk.Web"><ItemGroup>${pkg}</ItemGroup></Project>`;

const SYSTEM: Record<string, string> = {
  'docker-compose.yml': COMPOSE,
  'Catalog.API/Catalog.API.csproj': csproj(),
  'Catalog.API/Dockerfile': 'FROM mcr.microsoft.com/dotnet/aspnet:8.0\n',
  'Basket.API/Basket.API.csproj': csproj(
    '<PackageReference Include="Microsoft.EntityFrameworkCore.Sqlite" Version="8.0.0" />',
  ),
  'Basket.API/Dockerfile': 'FROM mcr.microsoft.com/dotnet/aspnet:8.0\n',
  'Basket.API/Program.cs': `var builder = WebApplication.CreateBuilder(args);
builder.Services.AddDbContext<BasketDb>(o => o.UseSqlite(builder.Configuration.GetConnectionString("Database")));
`,
  'Basket.API/appsettings.json':
    '{ "ConnectionStrings": { "Database": "Data Source=basketdb" } }\n',
  'Gateway/Gateway.csproj': csproj(
    '<PackageReference Include="Yarp.ReverseProxy" Version="2.1.0" />',
  ),
  'Gateway/Dockerfile': 'FROM mcr.microsoft.com/dotnet/aspnet:8.0\n',
  'Gateway/appsettings.json': `{
  "ReverseProxy": {
    "Routes": { "catalog-route": { "ClusterId": "catalog-cluster", "Match": { "Path": "/c/{**x}" } } },
    "Clusters": {
      "catalog-cluster": { "Destinations": { "d1": { "Address": "http://catalog.api:8080" } } },
      "basket-cluster": { "Destinations": { "d1": { "Address": "http://basket.api:8080" } } },
      "search-cluster": { "Destinations": { "d1": { "Address": "http://search.local:9200" } } },
      "docs-cluster": { "Destinations": { "d1": { "Address": "https://docs.example.com" } } }
    }
  }
}
`,
};

test('a YARP cluster address naming a dotted compose service reaches that service', async (t) => {
  const { graph } = await analyzeFileMap(SYSTEM);
  const c = connections(graph);
  const msg = c.join('\n');
  t.true(c.includes('service:gateway -> service:catalog.api'), msg);
  t.true(c.includes('service:gateway -> service:basket.api'), msg);
  // A compose `hostname` is a name of its service too.
  t.true(c.includes('service:gateway -> service:search'), msg);
  // Must not: a dotted host no deployment declares stays external, and no deployed name is
  // left as an external entity beside its service.
  t.true(c.includes('service:gateway -> external:docs.example.com'), msg);
  const keys = graph.entities.map((e) => e.canonical_key);
  for (const k of ['external:catalog.api', 'external:basket.api', 'external:search.local'])
    t.false(keys.includes(k), keys.join(', '));
});

test('an embedded SQLite store is also known by the file its unit alone opens', async (t) => {
  const { graph } = await analyzeFileMap(SYSTEM);
  const store = graph.entities.find((e) => e.canonical_key === 'datastore:basket.api-sqlite');
  t.truthy(store, graph.entities.map((e) => e.canonical_key).join(', '));
  t.is(store?.attributes.embedded, true);
  t.true((store?.attributes.aliases as string[]).includes('datastore:basketdb'));
  t.true(connections(graph).includes('service:basket.api -> datastore:basket.api-sqlite'));
});

test('a database file two units open, or one named like another entity, names no store', async (t) => {
  const sqliteUnit = (name: string, source: string): Record<string, string> => ({
    [`${name}/${name}.csproj`]: csproj(
      '<PackageReference Include="Microsoft.EntityFrameworkCore.Sqlite" Version="8.0.0" />',
    ),
    [`${name}/Program.cs`]: 'builder.Services.AddDbContext<Db>(o => o.UseSqlite(cs));\n',
    [`${name}/appsettings.json`]: `{ "ConnectionStrings": { "Db": "Data Source=${source}" } }\n`,
  });
  const { graph } = await analyzeFileMap({
    ...sqliteUnit('orders', 'shared.db'),
    ...sqliteUnit('invoices', 'data/shared.db'),
    // The file is named like the unit: the unit keeps its name, the store gets no alias.
    ...sqliteUnit('notes', 'notes.db'),
    // In memory: no file.
    ...sqliteUnit('cache', ':memory:'),
  });
  const aliasesOf = (k: string) =>
    (graph.entities.find((e) => e.canonical_key === k)?.attributes.aliases as string[]) ?? null;
  for (const unit of ['orders', 'invoices', 'notes', 'cache']) {
    const aliases = aliasesOf(`datastore:${unit}-sqlite`);
    t.deepEqual(aliases, [], `${unit}: ${String(aliases)}`);
  }
  t.true(graph.entities.some((e) => e.canonical_key === 'service:notes'));
});
