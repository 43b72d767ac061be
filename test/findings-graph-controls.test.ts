/**
 * The graph controls on what a reviewer would call sharing and cycles (issue 30, item 3): real
 * compose files and Aspire AppHosts through the analyzers; cases that must fail and must pass.
 */
import test from 'ava';
import { assessFiles, control } from './helpers/assess-files';

const svc = (name: string, env: string, extra = '') =>
  `  ${name}:\n    image: acme/${name}:1.0\n    environment:\n${env}${extra}`;

test('no-shared-database: two services on one database fail; a console and a migrator do not share', async (t) => {
  const shared = control(
    await assessFiles({
      'docker-compose.yml': `services:
  db:
    image: postgres:16
${svc('orders', '      DATABASE_URL: postgres://app:x@db:5432/shop\n')}
${svc('billing', '      DATABASE_URL: postgres://app:x@db:5432/shop\n')}
`,
    }),
    'no-shared-database',
  );
  t.is(shared.status, 'fail');
  t.regex(
    shared.findings[0]?.title ?? '',
    /datastore:db is shared by service:billing, service:orders/,
  );

  const owned = control(
    await assessFiles({
      'docker-compose.yml': `services:
  search:
    image: elasticsearch:8.13.0
${svc('orders', '      SEARCH_URL: http://search:9200\n')}
  kibana:
    image: kibana:8.13.0
    environment:
      ELASTICSEARCH_HOSTS: http://search:9200
${svc('orders-migrator', '      SEARCH_URL: http://search:9200\n')}
`,
    }),
    'no-shared-database',
  );
  t.is(owned.status, 'pass', owned.rationale);
  t.regex(owned.requirements[0]?.rationale ?? '', /comply/);
});

test('no-shared-database: one store name in two separate Aspire application models is two stores', async (t) => {
  const host = (apps: string[]) => `#:sdk Aspire.AppHost.Sdk@13.1.0
var builder = DistributedApplication.CreateBuilder(args);
var cache = builder.AddRedis("cache");
${apps.map((a) => `builder.AddNodeApp("${a}", "./${a}", "app.js").WithReference(cache);`).join('\n')}
builder.Build().Run();
`;
  const separate = control(
    await assessFiles({
      'samples/one/apphost.cs': host(['shop']),
      'samples/two/apphost.cs': host(['blog']),
    }),
    'no-shared-database',
  );
  t.is(separate.status, 'pass', separate.rationale);
  t.regex(separate.requirements[0]?.rationale ?? '', /comply/);
  const together = control(
    await assessFiles({ 'app/apphost.cs': host(['shop', 'blog']) }),
    'no-shared-database',
  );
  t.is(together.status, 'fail');
});

test('no-service-dependency-cycle: a call loop fails; a loop only through a telemetry collector passes', async (t) => {
  const loop = control(
    await assessFiles({
      'docker-compose.yml': `services:
${svc('a', '      B_URL: http://b:8080\n')}
${svc('b', '      A_URL: http://a:8080\n')}
`,
    }),
    'no-service-dependency-cycle',
  );
  t.is(loop.status, 'fail');
  const telemetry = control(
    await assessFiles({
      'docker-compose.yml': `services:
${svc('proxy', '      OTEL_EXPORTER_OTLP_ENDPOINT: http://collector:4318\n      WEB_URL: http://web:8080\n')}
${svc('web', '      OTEL_EXPORTER_OTLP_ENDPOINT: http://collector:4318\n')}
${svc('collector', '      PROXY_URL: http://proxy:8080\n')}
`,
    }),
    'no-service-dependency-cycle',
  );
  t.is(telemetry.status, 'pass', telemetry.rationale);
});
