/**
 * Two things that run nothing (issue 23, session 15): a workspace package of shared TypeScript
 * configuration (JSON files and `.d.ts` type declarations, no program) is no service; an EF Core
 * in-memory database in a project that also references a SQL Server provider is that project's
 * development/test alternative, no datastore. Small repositories written here. Pure.
 */
import test from 'ava';
import { analyzeFileMap, connections as edges, entityKeys as keys } from './helpers/pipeline';

const WORKSPACE = {
  'package.json': JSON.stringify({
    name: 'shop',
    private: true,
    workspaces: ['apps/*', 'packages/*'],
  }),
  'apps/web/package.json': JSON.stringify({
    name: '@shop/web',
    scripts: { start: 'node server.js' },
    dependencies: { express: '^4.0.0' },
    devDependencies: { '@shop/tsconfig': '*' },
  }),
  'apps/web/server.js': "require('express')().listen(3000);\n",
  'packages/tsconfig/package.json': JSON.stringify({
    name: '@shop/tsconfig',
    version: '0.0.0',
    private: true,
    scripts: { clean: 'rimraf node_modules' },
    files: ['base.json'],
  }),
  'packages/tsconfig/base.json': JSON.stringify({ compilerOptions: { strict: true } }),
  'packages/tsconfig/ambient.d.ts': "declare module '*.svg';\n",
  'packages/tsconfig/process-env.d.ts':
    'declare namespace NodeJS { interface ProcessEnv { PORT?: string } }\n',
};

test('config package: a workspace package of tsconfig JSON and .d.ts declarations is no service', async (t) => {
  const { graph } = await analyzeFileMap(WORKSPACE);
  const k = keys(graph);
  t.true(k.includes('service:web'));
  t.false(k.includes('service:tsconfig'));
});

test('config package: a package with a TypeScript source of its own keeps its default class', async (t) => {
  const { graph } = await analyzeFileMap({
    ...WORKSPACE,
    'packages/tsconfig/index.ts': "console.log('runs');\n",
  });
  t.true(keys(graph).includes('service:tsconfig'));
});

const CSPROJ = (refs: string[]) => `<Project Sdk="Microsoft.NET.Sdk">
  <ItemGroup>
${refs.map((r) => `    <PackageReference Include="${r}" Version="8.0.2" />`).join('\n')}
  </ItemGroup>
</Project>
`;

const DEPENDENCIES = `using Microsoft.EntityFrameworkCore;
public static class Dependencies
{
    public static void Configure(IConfiguration configuration, IServiceCollection services)
    {
        if (bool.Parse(configuration["UseOnlyInMemoryDatabase"]!))
        {
            services.AddDbContext<CatalogContext>(c =>
               c.UseInMemoryDatabase("Catalog"));
        }
        else
        {
            services.AddDbContext<CatalogContext>(c =>
                c.UseSqlServer(configuration.GetConnectionString("CatalogConnection")));
        }
    }
}
`;

test('in-memory store: EF Core InMemory beside the SQL Server provider is no datastore', async (t) => {
  const { graph, evidence } = await analyzeFileMap({
    'src/Infrastructure/Infrastructure.csproj': CSPROJ([
      'Microsoft.EntityFrameworkCore.InMemory',
      'Microsoft.EntityFrameworkCore.SqlServer',
    ]),
    'src/Infrastructure/Dependencies.cs': DEPENDENCIES,
  });
  t.false(keys(graph).includes('datastore:infrastructure-in-memory'));
  t.false(edges(graph).some((e) => e.includes('in-memory')));
  // The store stays evidence: an alternative to the SQL Server the project can open.
  t.true(
    evidence.some(
      (e) =>
        e.evidence_kind === 'embedded-store-alternative' && e.attributes.engine === 'in-memory',
    ),
  );
});

test('in-memory store: EF Core InMemory alone stays the project embedded datastore', async (t) => {
  const { graph } = await analyzeFileMap({
    'src/Infrastructure/Infrastructure.csproj': CSPROJ(['Microsoft.EntityFrameworkCore.InMemory']),
    'src/Infrastructure/Dependencies.cs': DEPENDENCIES.replace(/UseSqlServer/g, 'UseSomething'),
  });
  t.true(keys(graph).includes('datastore:infrastructure-in-memory'));
});
