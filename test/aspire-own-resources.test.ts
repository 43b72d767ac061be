/**
 * .NET Aspire AppHost idioms (issue 23, session 15): a resource added by a hosting extension the
 * AppHost defines itself (`builder.AddOllama("chat")`), an Azure Storage account run as the
 * Azurite emulator, and an address the AppHost hands a service that its code only uses as OpenID
 * Connect redirect URIs. Small systems written for this test. Pure.
 */
import test from 'ava';
import { analyzeFileMap, connections as edges, entityKeys as keys } from './helpers/pipeline';
import { assignedMember, customResources } from '../analysis/code/aspire-custom';

type Files = Record<string, string>;

const HOST_PROJECT = `<Project Sdk="Microsoft.NET.Sdk">
  <Sdk Name="Aspire.AppHost.Sdk" Version="9.1.0" />
  <PropertyGroup><OutputType>Exe</OutputType><TargetFramework>net9.0</TargetFramework></PropertyGroup>
  <ItemGroup>
    <PackageReference Include="Aspire.Hosting.AppHost" Version="9.1.0" />
    <ProjectReference Include="../Api/Api.csproj" />
    <ProjectReference Include="../Login/Login.csproj" />
    <ProjectReference Include="../Web/Web.csproj" />
  </ItemGroup>
</Project>`;

const EXTENSIONS = `namespace Aspire.Hosting;

internal class ModelServerResource(string name, string model) : ContainerResource(name)
{
    public string Model { get; } = model;
}

internal class GpuModelServerResource(string name) : ModelServerResource(name, "default");

internal class ClockResource(string name) : Resource(name);

internal static class ModelServerExtensions
{
    public static IResourceBuilder<GpuModelServerResource> AddModelServer(this IDistributedApplicationBuilder builder, string name, int? port = null)
    {
        var resource = new GpuModelServerResource(name);
        return builder.AddResource(resource)
            .WithHttpEndpoint(port: port, targetPort: 11434)
            .WithImage("ollama/ollama", tag: "0.6.5");
    }

    public static IResourceBuilder<ContainerResource> AddCacheBox(this IDistributedApplicationBuilder builder, string name)
        => builder.AddContainer(name, "valkey/valkey");

    // A resource that runs nothing: no entity.
    public static IResourceBuilder<ClockResource> AddClock(this IDistributedApplicationBuilder builder, string name)
        => builder.AddResource(new ClockResource(name));
}
`;

const SYSTEM: Files = {
  'src/AppHost/AppHost.csproj': HOST_PROJECT,
  'src/AppHost/ModelServer/ModelServerExtensions.cs': EXTENSIONS,
  'src/AppHost/Program.cs': `var builder = DistributedApplication.CreateBuilder(args);

var chat = builder.AddModelServer("chat").WithDataVolume();
var box = builder.AddCacheBox("box");
var clock = builder.AddClock("clock");

var storage = builder.AddAzureStorage("files-account");
if (builder.Environment.IsDevelopment())
{
    storage.RunAsEmulator(r => r.WithDataVolume());
}
var files = storage.AddBlobs("files");
var cloud = builder.AddAzureStorage("cloud-account").AddBlobs("archive");

var login = builder.AddProject<Projects.Login>("login");
var loginEndpoint = login.GetEndpoint("https");

var api = builder.AddProject<Projects.Api>("api")
    .WithReference(chat)
    .WithReference(box)
    .WithReference(clock)
    .WithReference(files)
    .WithReference(cloud)
    .WithEnvironment("IdentityUrl", loginEndpoint);

var web = builder.AddProject<Projects.Web>("web")
    .WithReference(api)
    .WithEnvironment("IdentityUrl", loginEndpoint);

login
    .WithEnvironment("WebEndpoint", web.GetEndpoint("https"))
    .WithEnvironment("ApiEndpoint", api.GetEndpoint("https"));

builder.Build().Run();
`,
  'src/Api/Api.csproj': `<Project Sdk="Microsoft.NET.Sdk.Web">
  <ItemGroup>
    <PackageReference Include="Aspire.Azure.Storage.Blobs" Version="9.1.0" />
  </ItemGroup>
</Project>`,
  'src/Api/Program.cs': `var builder = WebApplication.CreateBuilder(args);
builder.AddAzureBlobClient("files");
builder.Services.AddAuthentication().AddJwtBearer(options =>
{
    options.Authority = builder.Configuration["IdentityUrl"];
});
var app = builder.Build();
app.Run();
`,
  'src/Web/Web.csproj': '<Project Sdk="Microsoft.NET.Sdk.Web"></Project>',
  'src/Web/Program.cs': `var builder = WebApplication.CreateBuilder(args);
builder.Services.AddHttpClient<ApiClient>(c => c.BaseAddress = new("http://api/"));
var app = builder.Build();
app.Run();
`,
  'src/Login/Login.csproj': `<Project Sdk="Microsoft.NET.Sdk.Web">
  <ItemGroup>
    <PackageReference Include="Duende.IdentityServer" Version="7.0.4" />
  </ItemGroup>
</Project>`,
  'src/Login/Config.cs': `using Duende.IdentityServer.Models;
public static class Config
{
    public static IEnumerable<Client> GetClients(IConfiguration configuration) =>
    [
        new Client
        {
            ClientId = "web",
            RedirectUris = { $"{configuration["WebEndpoint"]}/signin-oidc" },
            PostLogoutRedirectUris = { $"{configuration["WebEndpoint"]}/signout-callback-oidc" },
        },
    ];
}
`,
  // The login service also calls the API it is handed: that address stays a connection.
  'src/Login/Program.cs': `var builder = WebApplication.CreateBuilder(args);
builder.Services.AddIdentityServer().AddInMemoryClients(Config.GetClients(builder.Configuration));
builder.Services.AddHttpClient("api", c => c.BaseAddress = new Uri(builder.Configuration["ApiEndpoint"]!));
var app = builder.Build();
app.Run();
`,
};

test("a resource added by the AppHost's own Add* extension is a resource named by its first argument", async (t) => {
  const { graph } = await analyzeFileMap(SYSTEM);
  t.true(keys(graph).includes('service:chat'), keys(graph).join(', '));
  t.true(edges(graph).includes('service:api -> service:chat'), edges(graph).join(', '));
  // Its image says what it is: a valkey container is a datastore.
  t.true(edges(graph).includes('service:api -> datastore:box'), edges(graph).join(', '));
  // A custom resource that runs nothing (derived from Resource) is not read.
  t.false(
    keys(graph).some((k) => k.endsWith(':clock')),
    keys(graph).join(', '),
  );
});

test('an Azure Storage account run as the emulator is a datastore; its blobs are stores of it', async (t) => {
  const { graph } = await analyzeFileMap(SYSTEM);
  t.true(keys(graph).includes('datastore:files-account'), keys(graph).join(', '));
  t.true(edges(graph).includes('service:api -> datastore:files'), edges(graph).join(', '));
  // The client integration names the same store, not a bucket beside it.
  t.false(keys(graph).includes('bucket:files'), keys(graph).join(', '));
  // An account in Azure (no emulator) stays a bucket, as before.
  t.true(edges(graph).includes('service:api -> bucket:archive'), edges(graph).join(', '));
  t.false(keys(graph).includes('datastore:cloud-account'), keys(graph).join(', '));
});

test('an address the receiver only uses as OIDC redirect URIs is no connection from it', async (t) => {
  const { graph } = await analyzeFileMap(SYSTEM);
  const e = edges(graph);
  t.false(e.includes('service:login -> service:web'), e.join(', '));
  // The address it builds a client from stays a call; the clients' identity edges stay.
  t.true(e.includes('service:login -> service:api'), e.join(', '));
  t.true(e.includes('service:api -> service:login'), e.join(', '));
  t.true(e.includes('service:web -> service:login'), e.join(', '));
  t.true(e.includes('service:web -> service:api'), e.join(', '));
});

test('the member a configuration read is assigned to', (t) => {
  const at = (line: string) => assignedMember(line, line.indexOf('['));
  t.is(at('  RedirectUris = { $"{configuration["X"]}/signin-oidc" },'), 'RedirectUris');
  t.is(
    at('  PostLogoutRedirectUris = new List<string> { configuration["X"] },'),
    'PostLogoutRedirectUris',
  );
  t.is(at('  options.Authority = builder.Configuration["X"];'), 'Authority');
  t.is(at('  c.BaseAddress = new Uri(configuration["X"]);'), 'BaseAddress');
  t.is(at('  AllowedCorsOrigins = new string[] { configuration["X"] },'), 'AllowedCorsOrigins');
  t.is(at('  RedirectUri = $@"{configuration["X"]}/cb",'), 'RedirectUri');
  t.is(at('  var x = Use(configuration["X"]);'), null);
  t.is(at('  x += configuration["X"];'), null);
  t.is(at('  Func<string> f = () => configuration["X"];'), null);
  t.is(at('  if (a == configuration["X"]) {}'), null);
  // Long hostile lines stay linear (bounded look-back).
  const long = `${'{ '.repeat(50_000)}configuration["X"]`;
  t.is(assignedMember(long, long.indexOf('[')), null);
});

test('custom resource methods: kinds by base type, images, methods that add nothing running', (t) => {
  const found = customResources([{ path: 'x.cs', text: EXTENSIONS }]);
  t.deepEqual(found.get('AddModelServer'), {
    kind: 'container',
    image: 'ollama/ollama:0.6.5',
    path: 'x.cs',
  });
  t.is(found.get('AddCacheBox')?.image, 'valkey/valkey');
  t.false(found.has('AddClock'));
});
