/**
 * Embedded stores: SQLite / H2 / DuckDB / LiteDB files and in-process stores are datastores of
 * the unit that opens them (`embedded: true`, the engine), never shared services. Small units
 * written for this test.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import type { Graph } from '../analysis/reconcile';
import { analyzeFiles } from './helpers/pipeline';

const edges = (g: Graph) => g.relationships.map((r) => `${r.source_key} -> ${r.target_key}`);
const files = (m: Record<string, string>): SourceFile[] =>
  Object.entries(m).map(([path, text]) => ({ path, text }));

const SYSTEM: Record<string, string> = {
  // .NET: EF Core SQLite with `Data Source=` in settings.
  'catalog/Catalog.csproj': `<Project Sdk="Microsoft.NET.Sdk.Web"><ItemGroup>
<PackageReference Include="Microsoft.EntityFrameworkCore.Sqlite" Version="8.0.0" /></ItemGroup></Project>`,
  'catalog/Program.cs': `var builder = WebApplication.CreateBuilder(args);
builder.Services.AddDbContext<CatalogDb>(o => o.UseSqlite(builder.Configuration.GetConnectionString("Catalog")));
builder.Build().Run();
`,
  'catalog/appsettings.json': '{ "ConnectionStrings": { "Catalog": "Data Source=catalog.db" } }\n',
  'catalog/tests/CatalogTests.cs':
    'services.AddDbContext<CatalogDb>(o => o.UseInMemoryDatabase("t"));\n',
  // Spring: H2 in memory.
  'orders/pom.xml': `<project><modelVersion>4.0.0</modelVersion><groupId>s</groupId><artifactId>orders</artifactId><version>1</version>
<dependencies><dependency><groupId>com.h2database</groupId><artifactId>h2</artifactId></dependency></dependencies></project>`,
  'orders/src/main/resources/application.yml': `spring:
  datasource:
    url: jdbc:h2:mem:orders
`,
  // Python: SQLAlchemy over a file, and DuckDB.
  'reports/requirements.txt': 'sqlalchemy==2.0\nduckdb==1.0\n',
  'reports/app.py': `from sqlalchemy import create_engine
import duckdb
engine = create_engine("sqlite:///./app.db")
con = duckdb.connect("analytics.duckdb")
# engine2 = create_engine("sqlite:///old.db") was the old one
`,
  // Another unit opening a file of the same name: its own store, not a shared one.
  'notes/requirements.txt': 'flask==3.0\n',
  'notes/app.py': `import sqlite3
conn = sqlite3.connect("app.db")
`,
  // Only a commented-out store: none.
  'legacy/requirements.txt': 'flask==3.0\n',
  'legacy/app.py': '# conn = sqlite3.connect("legacy.db")\nprint("no store")\n',
  // An in-memory fallback beside a MySQL driver: the server is the store, the fallback no edge.
  'inventory/go.mod':
    'module example.com/inventory\n\ngo 1.22\n\nrequire (\n\tgorm.io/driver/mysql v1.5.0\n\tgorm.io/driver/sqlite v1.5.0\n)\n',
  'inventory/main.go': `package main
func open(kind string) {
	if kind == "mysql" {
		db, _ = gorm.Open(mysql.Open(dsn))
	} else {
		db, _ = gorm.Open(sqlite.Open("file::memory:?cache=shared"))
	}
}
`,
  // A unit with a real database server: not embedded.
  'billing/package.json': JSON.stringify({ name: 'billing', dependencies: { pg: '8.0.0' } }),
  'billing/index.js':
    "const pool = new Pool({ connectionString: 'postgres://billing-db:5432/bills' });\n",
};

test('a database a unit opens in its own process is its embedded datastore', async (t) => {
  const { graph } = await analyzeFiles(files(SYSTEM));
  const e = edges(graph);
  const msg = e.join('\n');
  const entity = (k: string) => graph.entities.find((x) => x.canonical_key === k);
  for (const [unit, engine] of [
    ['catalog', 'sqlite'],
    ['orders', 'h2'],
    ['reports', 'sqlite'],
    ['reports', 'duckdb'],
    ['notes', 'sqlite'],
  ] as const) {
    const key = `datastore:${unit}-${engine}`;
    t.true(e.includes(`service:${unit} -> ${key}`), `${key}\n${msg}`);
    t.is(entity(key)?.attributes.engine, engine);
    t.is(entity(key)?.attributes.embedded, true);
  }
  // Must not: a store shared between two units, a store from a test or a comment, a server
  // database typed embedded, or any embedded engine as a service.
  const stores = graph.relationships.filter((r) => r.target_key.endsWith('-sqlite'));
  t.is(new Set(stores.map((r) => r.target_key)).size, stores.length);
  t.is(entity('datastore:catalog-in-memory'), undefined);
  t.is(entity('datastore:legacy-sqlite'), undefined);
  t.is(entity('datastore:inventory-sqlite'), undefined);
  t.is(graph.entities.filter((x) => x.canonical_key.startsWith('datastore:reports-')).length, 2);
  t.not(entity('datastore:billing-db')?.attributes.embedded, true);
  t.false(
    graph.entities.some((x) => x.kind === 'service' && /sqlite|h2|duckdb/.test(x.name)),
    graph.entities.map((x) => x.canonical_key).join(', '),
  );
});
