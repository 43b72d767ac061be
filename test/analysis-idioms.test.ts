/**
 * Idioms of systems the analyzers had not seen (issue 23, session 8): each capability with a
 * small system written for this test, a case that must be found and one that must not.
 */
import test from 'ava';
import { analyzeCloud } from '../analysis/cloud';
import type { SourceFile } from '../analysis/evidence';
import { UNREAD_DESCRIPTION_REASONS } from '../analysis/uncertainty';
import type { Graph } from '../analysis/reconcile';
import { analyzeFiles } from './helpers/pipeline';

const edges = (g: Graph) => g.relationships.map((r) => `${r.source_key} -> ${r.target_key}`);
const keys = (g: Graph) => g.entities.map((e) => e.canonical_key);
const files = (m: Record<string, string>): SourceFile[] =>
  Object.entries(m).map(([path, text]) => ({ path, text }));

test('images: stores and brokers known by their repository path are typed, not services', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'docker-compose.yml': `services:
  api:
    image: acme/api:1.0
    environment:
      ConnectionStrings__Db: "Server=sql;Database=app;User Id=sa;Password=x"
      SQL_HOST: sql
      STORAGE_HOST: blobs
      CLICKHOUSE_URL: http://olap:8123
      S3_ENDPOINT: http://objects:9000
      KAFKA_BOOTSTRAP_SERVERS: events:9092
      MQTT_HOST: mqtt
      SMTP_HOST: mail
      BILLING_URL: http://billing:8080
  sql:
    image: mcr.microsoft.com/mssql/server:2022-latest
  blobs:
    image: mcr.microsoft.com/azure-storage/azurite
  olap:
    image: clickhouse/clickhouse-server:24.3
  objects:
    image: cgr.dev/chainguard/minio
  events:
    image: apache/kafka-native:3.8.0
  mqtt:
    image: eclipse-mosquitto:2
  mail:
    image: maildev/maildev
  billing:
    image: acme/server:1.0
`,
    }),
  );
  const k = keys(graph);
  for (const key of [
    'datastore:sql',
    'datastore:blobs',
    'datastore:olap',
    'datastore:objects',
    'queue:events',
    'queue:mqtt',
    'datastore:mail',
  ])
    t.true(k.includes(key), key);
  // An image whose last segment is `server` but whose path is no known engine stays a service.
  t.true(k.includes('service:billing'));
  t.true(edges(graph).includes('service:api -> service:billing'));
  t.false(
    edges(graph).some((e) => / -> service:(sql|blobs|olap|objects|events|mqtt|mail)$/.test(e)),
  );
});

test('values read as hosts: flags, bucket URLs, plain bucket names and a database server setting are no calls', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'docker-compose.yml': `services:
  web:
    image: acme/shop:1.0
    environment:
      CALCULATE_API_BASE_URL: "true"
      CATALOG_URL: http://catalog:8080
      UPLOAD_BUCKET: shop
      PROFILES_BUCKET_URL: "s3://profiles?region=us-east-1&endpoint=objects:8333"
      DB_HOST: db
  worker:
    image: acme/shop-worker:1.0
    environment:
      EXPORT_BUCKET: shop
  catalog:
    image: acme/catalog:1.0
  shop:
    image: acme/shop-admin:1.0
  objects:
    image: chrislusf/seaweedfs
  db:
    image: mariadb:11
    environment:
      MARIADB_HOST: shop
      MARIADB_DATABASE: shop
  pool:
    image: edoburu/pgbouncer:1.25
    environment:
      DB_HOST: db
`,
    }),
  );
  const e = edges(graph);
  // Found: the real address, the object store behind the bucket URL, the database, the pooler's database.
  t.true(e.includes('service:web -> service:catalog'));
  t.true(e.includes('service:web -> datastore:objects'));
  t.true(e.includes('service:web -> datastore:db'));
  t.true(e.includes('datastore:pool -> datastore:db'));
  // Not found: a flag, a bucket named in the URL, a bucket named like a service, a server setting.
  t.false(keys(graph).includes('service:true'));
  t.false(keys(graph).some((k) => k.endsWith(':profiles')));
  t.false(
    e.some((x) => /-> service:shop$/.test(x)),
    e.join('\n'),
  );
  t.false(e.some((x) => x.startsWith('datastore:db ->')));
});

const pom = (artifact: string, deps: string[]) => `<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.shop</groupId>
  <artifactId>${artifact}</artifactId>
  <version>1.0.0</version>
  <dependencies>
${deps.map((d) => `    <dependency><groupId>org.springframework.cloud</groupId><artifactId>${d}</artifactId></dependency>`).join('\n')}
  </dependencies>
</project>`;
const client = (name: string) => ({
  [`${name}/src/main/resources/bootstrap.yml`]: `spring:
  application:
    name: ${name}
  cloud:
    config:
      uri: http://config:8888
`,
  [`${name}/src/main/java/shop/App.java`]: '@SpringBootApplication public class App {}\n',
});

test('shared settings: a setting served to every client is only the edge of clients with its library', async (t) => {
  const { graph, evidence } = await analyzeFiles(
    files({
      'config/pom.xml': pom('config', ['spring-cloud-config-server']),
      'config/src/main/resources/application.yml': `spring:
  application:
    name: config
  profiles:
    active: native
  cloud:
    config:
      server:
        native:
          search-locations: classpath:/shared
`,
      'config/src/main/java/shop/ConfigApplication.java':
        '@EnableConfigServer @SpringBootApplication public class ConfigApplication {}\n',
      'config/src/main/resources/shared/application.yml': `eureka:
  client:
    serviceUrl:
      defaultZone: http://registry:8761/eureka/
security:
  oauth2:
    resource:
      user-info-uri: http://auth-service:5000/uaa/users/current
spring:
  rabbitmq:
    host: rabbitmq
`,
      'accounts/pom.xml': pom('accounts', [
        'spring-cloud-starter-config',
        'spring-cloud-starter-netflix-eureka-client',
        'spring-cloud-starter-oauth2',
        'spring-cloud-starter-bus-amqp',
      ]),
      ...client('accounts'),
      'dashboard/pom.xml': pom('dashboard', [
        'spring-cloud-starter-config',
        'spring-cloud-starter-netflix-hystrix-dashboard',
      ]),
      ...client('dashboard'),
    }),
  );
  const e = edges(graph);
  for (const to of ['service:registry', 'service:auth-service', 'queue:rabbitmq'])
    t.true(e.includes(`service:accounts -> ${to}`), to);
  t.deepEqual(
    e.filter((x) => x.startsWith('service:dashboard ->')),
    ['service:dashboard -> service:config'],
  );
  // The dashboard's records stay, edgeless, saying which library it lacks.
  const kept = evidence.filter(
    (x) => x.subject_key === 'service:dashboard' && x.attributes.unused_shared_setting,
  );
  t.is(kept.length, 3);
});

const deployment = (name: string, image: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  selector:
    matchLabels:
      app: ${name}
  template:
    metadata:
      labels:
        app: ${name}
    spec:
      containers:
        - name: ${name}
          image: ${image}
---
apiVersion: v1
kind: Service
metadata:
  name: ${name}
spec:
  selector:
    app: ${name}
  ports:
    - port: 8080
`;

test('Spring Cloud Kubernetes: a ConfigMap named after the application holds its settings', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'k8s/mongodb.yaml': deployment('mongodb', 'mongo:7'),
      'k8s/cache.yaml': deployment('cache', 'redis:7'),
      'k8s/employee.yaml': deployment('employee', 'acme/employee:1.0'),
      'k8s/employee-config.yaml': `kind: ConfigMap
apiVersion: v1
metadata:
  name: employee
  labels:
    spring.cloud.kubernetes.config: "true"
data:
  application.properties: |-
    spring.mongodb.host: mongodb
    spring.mongodb.database: admin
`,
      'k8s/department.yaml': deployment('department', 'acme/department:1.0'),
      'k8s/department-config.yaml': `kind: ConfigMap
apiVersion: v1
metadata:
  name: department
data:
  application.yml: |
    spring:
      data:
        mongodb:
          host: mongodb
`,
      // Named after no application: an embedded file nobody is known to read.
      'k8s/shared-config.yaml': `kind: ConfigMap
apiVersion: v1
metadata:
  name: shared-settings
data:
  application.yml: |
    spring:
      data:
        redis:
          host: cache
`,
    }),
  );
  const e = edges(graph);
  t.true(e.includes('service:employee -> datastore:mongodb'), e.join('\n'));
  t.true(e.includes('service:department -> datastore:mongodb'), e.join('\n'));
  t.false(
    e.some((x) => x.endsWith('-> datastore:cache')),
    e.join('\n'),
  );
});

test('env_file naming a file the repository does not hold is a coverage gap, not a guess', async (t) => {
  const compose = `services:
  api:
    image: acme/api:1.0
    env_file: .env
  worker:
    image: acme/worker:1.0
    env_file:
      - path: ./worker.env
      - path: ./optional.env
        required: false
`;
  const without = await analyzeCloud([{ path: 'deploy/docker-compose.yml', text: compose }]);
  const gaps = without.gaps.filter((g) => g.reason === 'compose_env_file_missing');
  t.deepEqual(
    gaps.map((g) => g.message.split(' of ')[0]),
    ['env_file deploy/.env', 'env_file deploy/worker.env'],
  );
  t.true(UNREAD_DESCRIPTION_REASONS.has('compose_env_file_missing'));
  const withFiles = await analyzeCloud([
    { path: 'deploy/docker-compose.yml', text: compose },
    { path: 'deploy/.env', text: 'API_DB_HOST=db\n' },
    { path: 'deploy/worker.env', text: 'QUEUE_URL=amqp://mq:5672\n' },
  ]);
  t.false(withFiles.gaps.some((g) => g.reason === 'compose_env_file_missing'));
});

test('an identifier URI (a problem type, a schema) is no address the code calls', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'src/Api/Api.csproj': `<Project Sdk="Microsoft.NET.Sdk.Web"><ItemGroup><PackageReference Include="Hellang.Middleware.ProblemDetails" Version="6.5.1" /></ItemGroup></Project>`,
      'src/Api/InvalidCommandProblemDetails.cs': `public class InvalidCommandProblemDetails : ProblemDetails {
    public InvalidCommandProblemDetails(string detail) {
        Title = "Command validation error";
        Type = "https://somedomain/validation-error";
    }
}
public class Billing {
    private static readonly string BillingUrl = "http://billing:8080/api";
    public Task Send(HttpClient http) => http.PostAsync(BillingUrl, null);
}
`,
    }),
  );
  t.false(keys(graph).includes('service:somedomain'));
  t.true(edges(graph).includes('service:api -> service:billing'), edges(graph).join('\n'));
});

test('a Razor class library is a library, the web project using it a service', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'src/Web/Components/Shop.Components.csproj': `<Project Sdk="Microsoft.NET.Sdk.Razor">
  <PropertyGroup><TargetFrameworks>net8.0</TargetFrameworks></PropertyGroup>
  <ItemGroup><SupportedPlatform Include="browser" /></ItemGroup>
</Project>`,
      'src/Web/Components/Card.razor': '<div class="card">@ChildContent</div>\n',
      'src/Web/Server/Shop.Web.csproj': `<Project Sdk="Microsoft.NET.Sdk.Web">
  <ItemGroup><ProjectReference Include="../Components/Shop.Components.csproj" /></ItemGroup>
</Project>`,
      'src/Web/Server/Program.cs':
        'var app = WebApplication.CreateBuilder(args).Build();\napp.Run();\n',
    }),
  );
  t.false(keys(graph).includes('service:shop.components'), keys(graph).join(', '));
  t.true(keys(graph).includes('service:shop.web'), keys(graph).join(', '));
});

test('a database host in a *_DBHOST or <engine>_SERVER variable is an address; another *_SERVER is not', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'docker-compose.yml': `services:
  web:
    image: acme/web:1.0
    environment:
      - APP_DBHOST=db
      - POSTGRES_SERVER=pg
      - WEB_SERVER=gunicorn
  db:
    image: mariadb:11
  pg:
    image: postgres:16
  gunicorn:
    image: acme/gunicorn:1.0
`,
    }),
  );
  const e = edges(graph);
  t.true(e.includes('service:web -> datastore:db'), e.join('\n'));
  t.true(e.includes('service:web -> datastore:pg'), e.join('\n'));
  t.false(e.includes('service:web -> service:gunicorn'), e.join('\n'));
});

test('compose links: a container linked to another reaches it; depends_on alone is no connection', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'docker/docker-compose.yml': `services:
  proxy:
    image: httpd:2.4
    links:
      - orders
      - billing:payments
    ports: ["8080:80"]
  orders:
    image: acme/orders:1.0
    depends_on: [audit]
  billing:
    image: acme/billing:1.0
  audit:
    image: acme/audit:1.0
`,
    }),
  );
  const calls = graph.relationships
    .filter((r) => r.kind === 'connects_to')
    .map((r) => `${r.source_key} -> ${r.target_key}`)
    .sort();
  t.deepEqual(calls, ['service:proxy -> service:billing', 'service:proxy -> service:orders']);
});

test('SmallRye Stork: the service-discovery application or address list names the service called', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'docker-compose.yml': `services:
  fights:
    image: acme/fights:1.0
    environment:
      QUARKUS_STORK_HERO_SERVICE_SERVICE_DISCOVERY_APPLICATION: heroes
      QUARKUS_STORK_VILLAIN_SERVICE_SERVICE_DISCOVERY_ADDRESS_LIST: villains:8084
      QUARKUS_APPLICATION_NAME: narration
  heroes:
    image: acme/heroes:1.0
  villains:
    image: acme/villains:1.0
  narration:
    image: acme/narration:1.0
`,
    }),
  );
  const e = edges(graph);
  t.true(e.includes('service:fights -> service:heroes'), e.join('\n'));
  t.true(e.includes('service:fights -> service:villains'), e.join('\n'));
  t.false(e.includes('service:fights -> service:narration'), e.join('\n'));
});
