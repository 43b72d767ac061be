/**
 * A compose file that runs the tests (issue 23, session 14): `docker-compose-tests.yml` and its
 * override start test runners and throwaway stores; they are no deployment of the system when
 * the repository deploys it otherwise. And Serilog's HTTP sink address is where logs go, not a
 * call. Small repositories written here. Pure.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import { isTestComposeFile } from '../analysis/compose-test-stacks';
import { inLogSinkCall } from '../analysis/code/log-sinks';
import { analyzeFiles, connections as edges, entityKeys as keys } from './helpers/pipeline';

const MAIN: SourceFile = {
  path: 'src/docker-compose.yml',
  text: `services:
  api:
    build: { context: ., dockerfile: Api/Dockerfile }
    environment:
      DATABASE_URL: postgres://db:5432/app
  db:
    image: postgres:16
`,
};

const TESTS: SourceFile = {
  path: 'src/docker-compose-tests.yml',
  text: `services:
  db-test:
    image: postgres:16
  api-unit-test:
    build: { context: ., dockerfile: Api/Dockerfile, target: unittest }
    environment:
      DATABASE_URL: postgres://db-test:5432/app
    depends_on: [db-test]
`,
};

test('test stack: a compose file named for tests adds no entity or edge beside the deployment', async (t) => {
  const { graph } = await analyzeFiles([MAIN, TESTS]);
  const k = keys(graph);
  t.false(k.includes('service:api-unit-test'), k.join(', '));
  t.false(k.includes('datastore:db-test'), k.join(', '));
  t.true(edges(graph).includes('service:api -> datastore:db'), edges(graph).join(', '));
  t.false(
    edges(graph).some((e) => e.includes('db-test')),
    edges(graph).join(', '),
  );
});

test('test stack: the only deployment a repository has stays whole', async (t) => {
  const { graph } = await analyzeFiles([TESTS]);
  t.true(keys(graph).includes('datastore:db-test'), keys(graph).join(', '));
});

test('test stack: which compose file names mean tests', (t) => {
  t.true(isTestComposeFile('src/docker-compose-tests.yml'));
  t.true(isTestComposeFile('src/docker-compose-tests.override.yml'));
  t.true(isTestComposeFile('docker-compose.test.yaml'));
  t.true(isTestComposeFile('compose.e2e.yml'));
  t.false(isTestComposeFile('docker-compose.yml'));
  t.false(isTestComposeFile('docker-compose.override.yml'));
  t.false(isTestComposeFile('docker-compose.latest.yml'));
  t.false(isTestComposeFile('tests/app.yml'));
});

test('log sink: a Serilog HTTP sink address is no call', async (t) => {
  t.true(inLogSinkCall('        .WriteTo.Http(string.IsNullOrWhiteSpace(url) ? "'));
  t.false(inLogSinkCall('        var client = new HttpClient { BaseAddress = new Uri("'));
  const program: SourceFile = {
    path: 'src/Api/Program.cs',
    text: `using Serilog;
var builder = WebApplication.CreateBuilder(args);
Log.Logger = new LoggerConfiguration()
    .WriteTo.Http(string.IsNullOrWhiteSpace(url) ? "http://logstash:8080" : url, null)
    .CreateLogger();
var http = new HttpClient { BaseAddress = new Uri("http://catalog") };
`,
  };
  const csproj: SourceFile = {
    path: 'src/Api/Api.csproj',
    text: '<Project Sdk="Microsoft.NET.Sdk.Web"><ItemGroup><PackageReference Include="Serilog.Sinks.Http" Version="8.0.0" /></ItemGroup></Project>\n',
  };
  const compose: SourceFile = {
    path: 'src/docker-compose.yml',
    text: `services:
  api:
    build: { context: ., dockerfile: Api/Dockerfile }
  logstash:
    image: acme/logstash:1
  catalog:
    image: acme/catalog:1
`,
  };
  const docker: SourceFile = {
    path: 'src/Api/Dockerfile',
    text: 'FROM mcr.microsoft.com/dotnet/aspnet:7.0\n',
  };
  const { graph } = await analyzeFiles([program, csproj, compose, docker]);
  const e = edges(graph);
  t.false(e.includes('service:api -> service:logstash'), e.join(', '));
  t.true(e.includes('service:api -> service:catalog'), e.join(', '));
});
