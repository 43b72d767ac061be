/**
 * A .NET solution deployed by Compose from images (issue 23, session 16): the Dockerfile above
 * the `.Api` project that runs `dotnet <Assembly>.dll` builds that project; the solution's other
 * service projects no deployment runs are no services; a named env file's committed template
 * (`.env.<name>.sample`) documents the service's addresses; an EF Core in-memory store beside a
 * SQL provider brought in by a referenced project is an alternative, no store.
 */
import test from 'ava';
import { dotnetAssembly } from '../analysis/reconcile-dotnet-entry';
import { analyzeFileMap, connections, entityKeys } from './helpers/pipeline';

const webProject = (refs: string[] = []) => `<Project Sdk="Microsoft.NET.Sdk.Web">
  <PropertyGroup><TargetFramework>net9.0</TargetFramework></PropertyGroup>
  <ItemGroup>
${refs.map((r) => `    <ProjectReference Include="${r}" />`).join('\n')}
  </ItemGroup>
</Project>
`;
const libProject = (
  packages: string[] = [],
  refs: string[] = [],
) => `<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup><TargetFramework>net9.0</TargetFramework></PropertyGroup>
  <ItemGroup>
${packages.map((p) => `    <PackageReference Include="${p}" />`).join('\n')}
${refs.map((r) => `    <ProjectReference Include="${r}" />`).join('\n')}
  </ItemGroup>
</Project>
`;
const program = `var builder = WebApplication.CreateBuilder(args);
var app = builder.Build();
app.Run();
`;
const dockerfile = (
  project: string,
  assembly: string,
) => `FROM mcr.microsoft.com/dotnet/aspnet:9.0 AS base
WORKDIR /app
EXPOSE 80
FROM mcr.microsoft.com/dotnet/sdk:9.0 AS build
WORKDIR /src
COPY ./src/Ledger/${project}/ ./Ledger/${project}/
WORKDIR /src/Ledger/${project}/
RUN dotnet publish -c Release -o /app/publish
FROM base AS final
WORKDIR /app
COPY --from=build /app/publish .
ENTRYPOINT ["dotnet", "${assembly}.dll"]
`;

/** A solution of two hosts and a shared persistence library; Compose runs one host's image. */
const solution = (assembly: string): Record<string, string> => ({
  'deploy/compose/docker-compose.infra.yaml': `services:
  pg:
    image: postgres:16
`,
  'deploy/compose/docker-compose.apps.yaml': `services:
  ledger:
    image: ghcr.io/acme/ledger-service:latest
    env_file:
      - ./.env.ledger
    environment:
      - ASPNETCORE_ENVIRONMENT=docker
`,
  'deploy/compose/.env.ledger.sample':
    'Storage__ConnectionString=Server=pg;Port=5432;Database=ledger;User Id=app;Password=app\n',
  'src/Ledger/Dockerfile': dockerfile('Acme.Ledger.Api', assembly),
  'src/Ledger/Acme.Ledger.Api/Acme.Ledger.Api.csproj': webProject([
    '..\\Acme.Ledger\\Acme.Ledger.csproj',
  ]),
  'src/Ledger/Acme.Ledger.Api/Program.cs': program,
  'src/Ledger/Acme.Ledger/Acme.Ledger.csproj': libProject(
    [],
    ['..\\..\\Shared\\Acme.Persistence\\Acme.Persistence.csproj'],
  ),
  'src/Ledger/Acme.Ledger/Storage.cs': `public static class Storage {
    public static void Add(IServiceCollection services, bool inMemory) {
        if (inMemory) services.AddDbContext<LedgerDb>(o => o.UseInMemoryDatabase("ledger"));
        else services.AddPostgresDbContext<LedgerDb>();
    }
}
`,
  'src/Shared/Acme.Persistence/Acme.Persistence.csproj': libProject([
    'Npgsql.EntityFrameworkCore.PostgreSQL',
  ]),
  'src/Shared/Acme.Persistence/Postgres.cs': `public static class Postgres {
    public static void AddPostgresDbContext<T>(this IServiceCollection s) { }
}
`,
  'src/Drafts/Acme.Drafts.Api/Acme.Drafts.Api.csproj': webProject(),
  'src/Drafts/Acme.Drafts.Api/Program.cs': program,
});

test('dotnetAssembly: the assembly a Dockerfile program runs with dotnet', (t) => {
  t.is(dotnetAssembly('["dotnet", "Acme.Ledger.Api.dll"]'), 'Acme.Ledger.Api');
  t.is(dotnetAssembly('dotnet /app/Acme.Ledger.Api.dll --urls http://+:80'), 'Acme.Ledger.Api');
  t.is(dotnetAssembly('["./Acme.Ledger.Api"]'), null);
  t.is(dotnetAssembly('["dotnet", "watch", "run"]'), null);
  t.is(dotnetAssembly(null), null);
});

test('a compose image built by a Dockerfile running `dotnet X.dll` is project X; unrun projects are no services', async (t) => {
  const { graph } = await analyzeFileMap(solution('Acme.Ledger.Api'));
  const keys = entityKeys(graph);
  t.true(keys.includes('service:ledger'), keys.join(', '));
  // The project the image runs is the compose service, not a service of its own.
  t.false(keys.includes('service:acme.ledger.api'), keys.join(', '));
  // The solution's other host, run by no deployment, is no service.
  t.false(keys.includes('service:acme.drafts.api'), keys.join(', '));
  // The in-memory EF Core store is the alternative of the referenced project's PostgreSQL one.
  t.false(
    keys.some((k) => k.endsWith('-in-memory')),
    keys.join(', '),
  );
  // The named env file is absent; its committed template documents the service's database.
  t.true(
    connections(graph).includes('service:ledger -> datastore:pg'),
    connections(graph).join('; '),
  );
});

test('a Dockerfile running an assembly no project builds names no project; nothing is dropped', async (t) => {
  const { graph } = await analyzeFileMap(solution('Acme.Other.Host'));
  const keys = entityKeys(graph);
  // No deployed project is known: the solution's hosts stay services, as before.
  t.true(keys.includes('service:acme.ledger.api'), keys.join(', '));
  t.true(keys.includes('service:acme.drafts.api'), keys.join(', '));
});
