/**
 * The role of an address: an address a component receives is a call only if the component uses
 * it as a client. Redirect / callback / allow-list / issuer addresses and client applications
 * registered with an identity provider are no calls from the receiver. Small systems written for
 * this test: an Aspire AppHost, a compose file, and application settings.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import type { Graph } from '../analysis/reconcile';
import { analyzeFiles } from './helpers/pipeline';

const edges = (g: Graph) => g.relationships.map((r) => `${r.source_key} -> ${r.target_key}`);
const files = (m: Record<string, string>): SourceFile[] =>
  Object.entries(m).map(([path, text]) => ({ path, text }));

const csproj = (deps: string[], extra = '') => `<Project Sdk="Microsoft.NET.Sdk.Web">
  <PropertyGroup><TargetFramework>net9.0</TargetFramework></PropertyGroup>
  ${extra}
  <ItemGroup>${deps.map((d) => `<PackageReference Include="${d}" Version="1.0.0" />`).join('')}</ItemGroup>
</Project>`;

const ASPIRE = {
  'src/Host/Host.csproj': csproj(
    ['Aspire.Hosting.AppHost'],
    '<Sdk Name="Aspire.AppHost.Sdk" Version="9.1.0" />',
  ),
  'src/Host/Program.cs': `var builder = DistributedApplication.CreateBuilder(args);
var identity = builder.AddProject<Projects.Identity_Api>("identity-api");
var orders = builder.AddProject<Projects.Orders_Api>("orders-api")
    .WithEnvironment("Identity__Url", identity.GetEndpoint("http"));
var webapp = builder.AddProject<Projects.WebApp>("webapp")
    .WithReference(orders)
    .WithEnvironment("IdentityUrl", identity.GetEndpoint("https"))
    .WithEnvironment("CallBackUrl", webapp.GetEndpoint("https"));
identity.WithEnvironment("OrdersApiClient", orders.GetEndpoint("http"))
    .WithEnvironment("WebAppClient", webapp.GetEndpoint("https"))
    .WithEnvironment("AllowedOrigins", webapp.GetEndpoint("https"));
builder.Build().Run();
`,
  'src/Identity.Api/Identity.Api.csproj': csproj(['Duende.IdentityServer']),
  'src/Identity.Api/Program.cs': 'var app = WebApplication.Create(args); app.Run();\n',
  'src/Orders.Api/Orders.Api.csproj': csproj(['Microsoft.AspNetCore.OpenApi']),
  'src/Orders.Api/Program.cs': 'var app = WebApplication.Create(args); app.Run();\n',
  'src/WebApp/WebApp.csproj': csproj(['Microsoft.AspNetCore.Components']),
  'src/WebApp/Program.cs': 'var app = WebApplication.Create(args); app.Run();\n',
};

test('an AppHost handing client URLs to the identity provider makes no calls from it', async (t) => {
  const { graph } = await analyzeFiles(files(ASPIRE));
  const e = edges(graph);
  // Must hold: the clients' own calls (to the identity provider and to the API).
  t.true(e.includes('service:webapp -> service:identity-api'), e.join('\n'));
  t.true(e.includes('service:orders-api -> service:identity-api'));
  t.true(e.includes('service:webapp -> service:orders-api'));
  // Must not: the identity provider calling the clients registered with it, or a web app
  // calling itself through its callback.
  t.false(
    e.some((x) => x.startsWith('service:identity-api ->')),
    e.join('\n'),
  );
});

test('a `*Client` address is a call when the receiver is no identity provider', async (t) => {
  const host = ASPIRE['src/Host/Program.cs'].replace(
    'builder.Build()',
    'orders.WithEnvironment("PaymentsClient", webapp.GetEndpoint("http"));\nbuilder.Build()',
  );
  const { graph } = await analyzeFiles(files({ ...ASPIRE, 'src/Host/Program.cs': host }));
  t.true(edges(graph).includes('service:orders-api -> service:webapp'));
});

test('compose: redirect and client-registration variables of an identity provider image are no calls', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'docker-compose.yml': `services:
  keycloak:
    image: quay.io/keycloak/keycloak:24.0
    environment:
      - SPA_CLIENT_URL=http://spa:3000
      - KC_HOSTNAME_REDIRECT_URL=http://spa:3000
      - ADMIN_EVENTS_URL=http://audit:8080
  spa:
    image: org/spa:1
    environment:
      - AUTH_URL=http://keycloak:8080
      - OAUTH_REDIRECT_URI=http://spa:3000/callback
      - API_URL=http://orders:8080
  orders:
    image: org/orders:1
    environment:
      - JWT_ISSUER=http://keycloak:8080/realms/shop
      - PAYMENT_CLIENT_URL=http://payments:8080
  payments:
    image: org/payments:1
  audit:
    image: org/audit:1
`,
    }),
  );
  const e = edges(graph);
  t.true(e.includes('service:spa -> service:keycloak'), e.join('\n'));
  t.true(e.includes('service:spa -> service:orders'));
  // A client URL given to a service that is no identity provider is its client's address.
  t.true(e.includes('service:orders -> service:payments'));
  // Any other address the identity provider gets is still a call (an event sink).
  t.true(e.includes('service:keycloak -> service:audit'));
  t.false(e.includes('service:keycloak -> service:spa'), e.join('\n'));
  t.false(e.includes('service:spa -> service:spa'));
  t.false(e.includes('service:orders -> service:keycloak'), 'an issuer is compared, not called');
});

test('settings: a redirect URI in application settings is no call, a client address is', async (t) => {
  const { graph, evidence } = await analyzeFiles(
    files({
      'web/Web.csproj': csproj(['Microsoft.AspNetCore.Authentication.OpenIdConnect']),
      'web/Program.cs': 'var app = WebApplication.Create(args); app.Run();\n',
      'web/appsettings.json': JSON.stringify(
        {
          auth: {
            redirectUri: 'http://gateway:8080/signin-oidc',
            postLogoutRedirectUri: 'http://gateway:8080/',
            cors: { allowedOrigins: ['http://portal:8080'] },
          },
          catalogUrl: 'http://catalog:8080/api',
        },
        null,
        2,
      ),
    }),
  );
  const e = edges(graph);
  t.true(e.includes('service:web -> service:catalog'), e.join('\n'));
  t.false(e.includes('service:web -> service:gateway'), e.join('\n'));
  t.false(e.includes('service:web -> service:portal'), e.join('\n'));
  // The fact is kept as evidence, with its role.
  const handed = evidence.filter((x) => x.evidence_kind === 'address-handed');
  t.deepEqual(
    [
      ...new Set(
        handed.map((x) => `${String(x.attributes.host)}:${String(x.attributes.address_role)}`),
      ),
    ].sort(),
    ['gateway:redirect', 'portal:allow-list'],
  );
});
