/**
 * Scheme-less settings addresses (issue 23, session 16; analysis/code/settings-addresses.ts,
 * analysis/reconcile-settings-addresses.ts): a `host:port` value and a `Host` beside a `Port` in
 * a program's deployed settings file are addresses of the deployed unit they name; loopback,
 * the unit itself, redirect / callback / CORS keys, a developer environment's file, a host key
 * with no port and names nothing deploys draw nothing.
 */
import test from 'ava';
import { analyzeFileMap, connections } from './helpers/pipeline';

const csproj = `<Project Sdk="Microsoft.NET.Sdk.Web">
  <PropertyGroup><TargetFramework>net8.0</TargetFramework></PropertyGroup>
</Project>
`;

const fixture = {
  'deploy/docker-compose.yml': `services:
  storefront:
    build: ../Storefront
    environment:
      - ASPNETCORE_ENVIRONMENT=Production
    ports:
      - "8000:80"
  ordersapi:
    build: ../OrdersApi
  relay:
    image: acme/relay:1.0
  billing:
    image: acme/billing:1.0
  reports:
    image: acme/reports:1.0
`,
  'Storefront/Storefront.csproj': csproj,
  'Storefront/Program.cs': `var builder = WebApplication.CreateBuilder(args);
var app = builder.Build();
app.Run();
`,
  'Storefront/appsettings.Production.json': `{
  "Backends": {
    "Orders": "ordersapi:8080",
    "Catalogue": "catalogue:9000",
    "Self": "storefront:80",
    "Local": "localhost:5000"
  },
  "Auth": { "CallbackAddress": "billing:7000" },
  "Cors": { "Origins": "reports:7100" },
  "Audit": { "Server": "billing" },
  "Mail": { "Host": "relay", "Port": 25, "User": "shop" }
}
`,
  'Storefront/appsettings.Development.json': `{
  "Backends": { "Reports": "reports:7100" }
}
`,
  'OrdersApi/OrdersApi.csproj': csproj,
  'OrdersApi/Program.cs': `var app = WebApplication.CreateBuilder(args).Build();
app.Run();
`,
};

test('settings addresses: a host:port value and a Host beside a Port name deployed services', async (t) => {
  const { graph } = await analyzeFileMap(fixture);
  const edges = connections(graph);
  t.true(edges.includes('service:storefront -> service:ordersapi'), edges.join('\n'));
  t.true(edges.includes('service:storefront -> service:relay'), edges.join('\n'));
});

test('settings addresses: callback, CORS, port-less host keys, developer files and undeployed names draw nothing', async (t) => {
  const { graph } = await analyzeFileMap(fixture);
  const edges = connections(graph);
  t.false(edges.includes('service:storefront -> service:billing'), edges.join('\n'));
  t.false(edges.includes('service:storefront -> service:reports'), edges.join('\n'));
  const keys = graph.entities.map((e) => e.canonical_key);
  t.false(
    keys.some((k) => k.endsWith(':catalogue')),
    keys.join('\n'),
  );
  t.false(
    keys.some((k) => k.endsWith(':localhost')),
    keys.join('\n'),
  );
  t.false(
    edges.some((e) => e.startsWith('service:storefront -> ') && e.endsWith(':storefront')),
    edges.join('\n'),
  );
});
