/**
 * Addresses in code (fallback defaults in every supported language, client constructors with a
 * literal host, service-discovery URIs) and reverse proxies / gateways as routers (nginx and its
 * envsubst templates, Envoy, Traefik labels, YARP, Spring Cloud Gateway). Each on small in-memory
 * systems run through the audit's pipeline (classify, analyzers, reconcile).
 */
import test from 'ava';
import { analyzeFileMap } from './helpers/pipeline';
import type { Graph } from '../analysis/reconcile';
import { classifyPath } from '../domain/audits/classify';

type Files = Record<string, string>;

const run = analyzeFileMap;

const edges = (g: Graph, from?: string) =>
  g.relationships
    .filter((r) => r.kind === 'connects_to' && (from === undefined || r.source_key === from))
    .map((r) => `${r.source_key}->${r.target_key}`)
    .sort();

// ---------------------------------------------------------------------------------------------
// 4. Addresses in code

const DEFAULTS: Array<[string, string, Files, string]> = [
  [
    'js ||',
    'service:web',
    {
      'web/package.json': '{"name":"web"}',
      'web/index.js': "const a = process.env.API_URL || 'http://api:8080';",
    },
    'http://api:8080',
  ],
  [
    'ts ??',
    'service:web',
    {
      'web/package.json': '{"name":"web"}',
      'web/index.ts': "const a = process.env.API_HOST ?? 'api';",
    },
    'api',
  ],
  [
    'python getenv',
    'service:app',
    {
      'app/requirements.txt': 'flask\n',
      'app/main.py': "import os\nh = os.getenv('API_HOST', 'api')\n",
    },
    'api',
  ],
  [
    'python environ.get',
    'service:app',
    {
      'app/requirements.txt': 'flask\n',
      'app/main.py': 'import os\nh = os.environ.get("API_ADDR", "api:9000")\n',
    },
    'api:9000',
  ],
  [
    'go helper',
    'service:svc',
    {
      'svc/go.mod': 'module example.com/svc\n\ngo 1.22\n',
      'svc/main.go':
        'package main\n\nfunc main() {\n\taddr := getEnv("API_ADDR", "api:8080")\n\t_ = addr\n}\n',
    },
    'api:8080',
  ],
  [
    'go LookupEnv',
    'service:svc',
    {
      'svc/go.mod': 'module example.com/svc\n\ngo 1.22\n',
      'svc/main.go':
        'package main\n\nimport "os"\n\nfunc main() {\n\taddr, ok := os.LookupEnv("API_ADDR")\n\tif !ok {\n\t\taddr = "api:8080"\n\t}\n\t_ = addr\n}\n',
    },
    'api:8080',
  ],
  [
    'java getOrDefault',
    'service:orders',
    {
      'orders/pom.xml': '<project><artifactId>orders</artifactId></project>',
      'orders/src/main/java/App.java':
        'class App { String h = System.getenv().getOrDefault("API_HOST", "api"); }',
    },
    'api',
  ],
  [
    'java Optional.orElse',
    'service:orders',
    {
      'orders/pom.xml': '<project><artifactId>orders</artifactId></project>',
      'orders/src/main/java/App.java':
        'class App { String h = Optional.ofNullable(System.getenv("API_URL")).orElse("http://api:8080"); }',
    },
    'http://api:8080',
  ],
  [
    'kotlin ?:',
    'service:orders',
    {
      'orders/pom.xml': '<project><artifactId>orders</artifactId></project>',
      'orders/src/main/kotlin/App.kt': 'val h = System.getenv("API_HOST") ?: "api"',
    },
    'api',
  ],
  [
    'c# ??',
    'service:worker',
    {
      'worker/Worker.csproj': '<Project Sdk="Microsoft.NET.Sdk"></Project>',
      'worker/Program.cs': 'var h = Environment.GetEnvironmentVariable("API_HOST") ?? "api";',
    },
    'api',
  ],
];

for (const [name, unit, files, expected] of DEFAULTS) {
  test(`code default (${name}): the env read keeps its fallback and connects to the declared service`, async (t) => {
    const { graph, evidence } = await run({
      ...files,
      'docker-compose.yml': 'services:\n  api:\n    image: shop/api:1\n',
    });
    const read = evidence.find((e) => e.evidence_kind === 'env-read' && e.subject_key === unit);
    t.is(read?.attributes.default, expected);
    t.true(edges(graph).includes(`${unit}->service:api`), edges(graph).join(', '));
  });
}

test('code default (php): getenv(...) ?: and $_ENV[...] ?? keep their fallback', async (t) => {
  const { evidence } = await run({
    'site/package.json': '{"name":"site"}',
    'site/index.php':
      "<?php\n$h = getenv('API_HOST') ?: 'api';\n$c = $_ENV['CACHE_HOST'] ?? 'cache';\n",
  });
  const reads = evidence
    .filter((e) => e.evidence_kind === 'env-read' && e.provider === 'php-source')
    .map((e) => `${String(e.attributes.variable)}=${String(e.attributes.default)}`)
    .sort();
  t.deepEqual(reads, ['API_HOST=api', 'CACHE_HOST=cache']);
});

test('a default that configuration overrides is not in effect; a helper without an upper-case name is no read', async (t) => {
  const { graph, evidence } = await run({
    'svc/go.mod': 'module example.com/svc\n\ngo 1.22\n',
    'svc/main.go':
      'package main\n\nimport "os"\n\nfunc main() {\n\t_ = getEnv("API_ADDR", "api:8080")\n\t_ = getEnv("name", "other")\n\tos.Setenv("OTHER_ADDR", "api:1")\n}\n',
    'docker-compose.yml':
      'services:\n  svc:\n    build: ./svc\n    environment:\n      API_ADDR: payments:9000\n  api:\n    image: shop/api:1\n  payments:\n    image: shop/payments:1\n',
  });
  t.deepEqual(edges(graph, 'service:svc'), ['service:svc->service:payments']);
  t.false(evidence.some((e) => e.attributes.variable === 'name'));
  // A setter is no read with a default.
  t.false(
    evidence.some((e) => e.attributes.variable === 'OTHER_ADDR' && 'default' in e.attributes),
  );
});

test('client constructors: Addr fields, HostName initializers and literal host-port arguments', async (t) => {
  const { graph } = await run({
    'docker-compose.yml':
      'services:\n  a:\n    build: ./a\n  b:\n    build: ./b\n  c:\n    build: ./c\n  cache:\n    image: redis:7\n  mq:\n    image: rabbitmq:3\n',
    'a/go.mod': 'module example.com/a\n\ngo 1.22\n',
    'a/main.go':
      'package main\n\nimport "github.com/redis/go-redis/v9"\n\nfunc main() {\n\t_ = redis.NewClient(&redis.Options{Addr: "cache:6379"})\n}\n',
    'b/B.csproj': '<Project Sdk="Microsoft.NET.Sdk"></Project>',
    'b/Program.cs':
      'var f = new ConnectionFactory() { HostName = "mq" };\nvar x = new ActiveMQConnectionFactory() { HostName = "nowhere" };\n',
    'c/pom.xml': '<project><artifactId>c</artifactId></project>',
    'c/src/main/java/C.java':
      'class C { Jedis j = new Jedis("cache", 6379); Jedis l = new Jedis("localhost", 6379); }',
  });
  t.deepEqual(edges(graph), [
    'service:a->datastore:cache',
    'service:b->queue:mq',
    'service:c->datastore:cache',
  ]);
});

test('ADO.NET connection strings and a sole literal host passed to a connecting helper', async (t) => {
  const { graph, evidence } = await run({
    'docker-compose.yml':
      'services:\n  worker:\n    build: ./worker\n  db:\n    image: postgres:16\n  cache:\n    image: redis:7\n  sql:\n    image: mcr.microsoft.com/mssql/server:2022-latest\n',
    'worker/Worker.csproj':
      '<Project Sdk="Microsoft.NET.Sdk"><PropertyGroup><OutputType>Exe</OutputType></PropertyGroup><ItemGroup><PackageReference Include="Npgsql" Version="8.0.0" /><PackageReference Include="StackExchange.Redis" Version="2.7.0" /></ItemGroup></Project>',
    'worker/Program.cs': [
      'var pg = OpenDbConnection("Server=db;Username=app;Password=pw;");',
      'var redis = OpenRedisConnection("cache");',
      'var mux = ConnectionMultiplexer.Connect("cache:6379,abortConnect=false");',
      'var other = redisDb.StringGet("votes");',
      'var text = "Server=nowhere is a sentence; not a connection";',
    ].join('\n'),
  });
  t.deepEqual(edges(graph), ['service:worker->datastore:cache', 'service:worker->datastore:db']);
  const pg = evidence.find((e) => e.attributes.detected_by === 'ado-connection-string')!;
  // The engine comes from the unit's one SQL client library (Npgsql).
  t.is(pg.attributes.engine, 'postgres');
  t.is(pg.location.start_line, 1);
  t.deepEqual(
    evidence
      .filter((e) => e.attributes.detected_by === 'client-host-argument')
      .map((e) => e.location.start_line),
    [2, 3],
  );
});

test('a bare host in a camel-case address setting (RabbitMqUrl=rabbitmq) names the service', async (t) => {
  const { graph } = await run({
    'docker-compose.yml':
      'services:\n  orders:\n    image: acme/orders:1\n    environment:\n      - RabbitMqUrl=rabbitmq\n      - Greeting=rabbitmq\n  rabbitmq:\n    image: rabbitmq:3\n',
  });
  t.deepEqual(edges(graph), ['service:orders->queue:rabbitmq']);
});

test('service-discovery URIs name the service: https+http, http+https, _endpoint. and dns:///', async (t) => {
  const { graph, evidence } = await run({
    'docker-compose.yml':
      'services:\n  web:\n    build: ./web\n  catalog:\n    image: shop/catalog:1\n  basket:\n    image: shop/basket:1\n  ordering:\n    image: shop/ordering:1\n  payments:\n    image: shop/payments:1\n  stock:\n    image: shop/stock:1\n',
    'web/Web.csproj': '<Project Sdk="Microsoft.NET.Sdk.Web"></Project>',
    'web/Program.cs': [
      'builder.Services.AddHttpClient<CatalogApi>(c => c.BaseAddress = new Uri("https+http://catalog"));',
      'builder.Services.AddHttpClient<BasketApi>(c => c.BaseAddress = new("http+https://basket"));',
      'var ordering = "http://_grpc.ordering";',
      'var channel = GrpcChannel.ForAddress("dns:///payments:50051");',
      'builder.AddGrpcServiceReference<Stock.Client>($"{(isHttps ? "https" : "http")}://stock");',
    ].join('\n'),
  });
  t.deepEqual(edges(graph), [
    'service:web->service:basket',
    'service:web->service:catalog',
    'service:web->service:ordering',
    'service:web->service:payments',
    'service:web->service:stock',
  ]);
  t.true(
    evidence
      .filter(
        (e) =>
          e.subject_key === 'service:web' &&
          e.object_key?.startsWith('service:') &&
          e.object_key !== 'service:stock',
      )
      .every((e) => e.attributes.service_discovery === true),
  );
});

// ---------------------------------------------------------------------------------------------
// 5. Reverse proxies and gateways

test('classify: nginx configuration, templates and Envoy files are cloud files', (t) => {
  t.is(classifyPath('proxy/default.conf.template'), 'cloud');
  t.is(classifyPath('nginx/nginx.conf'), 'cloud');
  t.is(classifyPath('envoy/front-envoy.yaml'), 'cloud');
  t.is(classifyPath('envoy.yaml'), 'cloud');
});

const NGINX_TEMPLATE = `upstream frontend {
  server web:3000;
  server web-2:3000 backup;
}
server {
  listen 80;
  location /api/ { proxy_pass http://\${API_HOST}; }
  location /    { proxy_pass http://frontend; }
  location /rpc { grpc_pass grpc://\${RPC_ADDR}; }
  location /img { proxy_pass http://$host$request_uri; }
  # location /old { proxy_pass http://ghost:80; }
  location /unset { proxy_pass http://\${UNSET_HOST}; }
}
`;

test('nginx template filled by envsubst from Dockerfile ENV and compose environment: the proxy connects to every upstream', async (t) => {
  const { graph, evidence } = await run({
    'docker-compose.yml': `services:
  proxy:
    build: ./proxy
    environment:
      RPC_ADDR: rpc:50051
  api:
    image: shop/api:1
  web:
    image: shop/web:1
  web-2:
    image: shop/web:1
  rpc:
    image: shop/rpc:1
  ghost:
    image: shop/ghost:1
`,
    'proxy/Dockerfile':
      'FROM nginx:1.27\nENV API_HOST=api:8080 RPC_ADDR=old:1\nCOPY default.conf.template /etc/nginx/templates/\n',
    'proxy/default.conf.template': NGINX_TEMPLATE,
  });
  t.deepEqual(edges(graph), [
    'service:proxy->service:api',
    'service:proxy->service:rpc',
    'service:proxy->service:web',
    'service:proxy->service:web-2',
  ]);
  const api = evidence.find((e) => e.object_key === 'service:api' && e.provider === 'nginx')!;
  t.is(api.evidence_kind, 'proxy-route');
  t.is(api.location.path, 'proxy/default.conf.template');
  t.is(api.location.start_line, 7);
  t.deepEqual(api.attributes.filled_from, ['API_HOST']);
  t.is(api.attributes.owner, 'compose-build');
  t.is(evidence.find((e) => e.object_key === 'service:web')!.attributes.upstream, 'frontend');
});

test('nginx: a mounted config belongs to the mounting service; a plain .conf is not filled; an unowned one is a gap', async (t) => {
  const { graph, gaps, evidence } = await run({
    'deploy/docker-compose.yml': `services:
  gateway:
    image: nginx:1.27
    volumes:
      - ./nginx/nginx.conf:/etc/nginx/nginx.conf:ro
    environment:
      API_HOST: api
  api:
    image: shop/api:1
  php:
    image: php:8-fpm
`,
    'deploy/nginx/nginx.conf':
      'http {\n  server {\n    location / { proxy_pass http://${API_HOST}:8080; }\n    location ~ \\.php$ { fastcgi_pass php:9000; }\n  }\n}\n',
    'misc/other.conf': 'server { location / { proxy_pass http://api:8080; } }\n',
  });
  // `api` is reached through the compose environment only: nginx does not fill a plain .conf.
  t.deepEqual(edges(graph), ['service:gateway->service:api', 'service:gateway->service:php']);
  t.deepEqual(
    evidence.filter((e) => e.evidence_kind === 'proxy-route').map((e) => e.object_key),
    ['service:php'],
  );
  t.true(gaps.includes('misc/other.conf: proxy_owner_unknown'), gaps.join(', '));
});

test('nginx in a Dockerfile folder without compose: the Dockerfile names the proxy service', async (t) => {
  const { graph } = await run({
    'frontend-proxy/Dockerfile': 'FROM nginx:1.27\nENV CART_ADDR=cart:7070\n',
    'frontend-proxy/templates/default.conf.template':
      'server { location /cart { proxy_pass http://${CART_ADDR}/; } location /ext { proxy_pass https://api.stripe.com/; } }\n',
  });
  t.deepEqual(edges(graph), [
    'service:frontend-proxy->external:api.stripe.com',
    'service:frontend-proxy->service:cart',
  ]);
});

test('envoy: static cluster endpoints are upstreams of the envoy service that mounts the file', async (t) => {
  const { graph, evidence } = await run({
    'docker-compose.yml': `services:
  front-envoy:
    image: envoyproxy/envoy:v1.31
    volumes:
      - ./envoy/envoy.yaml:/etc/envoy/envoy.yaml
  users:
    image: shop/users:1
  orders:
    image: shop/orders:1
`,
    'envoy/envoy.yaml': `static_resources:
  listeners: []
  clusters:
    - name: users_cluster
      type: STRICT_DNS
      load_assignment:
        cluster_name: users_cluster
        endpoints:
          - lb_endpoints:
              - endpoint:
                  address:
                    socket_address:
                      address: users
                      port_value: 8080
    - name: orders_cluster
      hosts:
        - socket_address: { address: orders, port_value: 9090 }
    - name: local
      load_assignment:
        endpoints:
          - lb_endpoints:
              - endpoint: { address: { socket_address: { address: 127.0.0.1, port_value: 1 } } }
`,
  });
  t.deepEqual(edges(graph), [
    'service:front-envoy->service:orders',
    'service:front-envoy->service:users',
  ]);
  const users = evidence.find((e) => e.object_key === 'service:users' && e.provider === 'envoy')!;
  t.is(users.location.start_line, 10);
  t.is(users.attributes.port, 8080);
});

test('traefik: the traefik service routes to every service its labels expose, not to disabled ones', async (t) => {
  const { graph } = await run({
    'docker-compose.yml': `services:
  reverse-proxy:
    image: traefik:v3.1
    command: --providers.docker
    labels:
      - traefik.http.routers.dashboard.service=api@internal
  whoami:
    image: traefik/whoami
    labels:
      - "traefik.http.routers.whoami.rule=Host(\`whoami.localhost\`)"
      - "traefik.http.services.whoami.loadbalancer.server.port=80"
  app:
    image: shop/app:1
    labels:
      traefik.enable: "true"
  hidden:
    image: shop/hidden:1
    labels:
      traefik.enable: "false"
      traefik.http.routers.hidden.rule: Host(\`x\`)
  plain:
    image: shop/plain:1
`,
  });
  t.deepEqual(edges(graph), [
    'service:reverse-proxy->service:app',
    'service:reverse-proxy->service:whoami',
  ]);
});

test('yarp and spring cloud gateway: the gateway unit connects to every route destination', async (t) => {
  const { graph } = await run({
    'docker-compose.yml': `services:
  gateway:
    build: ./gateway
  edge:
    build: ./edge
  catalog:
    image: shop/catalog:1
  basket:
    image: shop/basket:1
  orders:
    image: shop/orders:1
  users:
    image: shop/users:1
`,
    'gateway/Gateway.csproj': '<Project Sdk="Microsoft.NET.Sdk.Web"></Project>',
    'gateway/appsettings.json': `{
  // YARP
  "ReverseProxy": {
    "Routes": { "catalog": { "ClusterId": "catalog", "Match": { "Path": "/catalog/{**rest}" } } },
    "Clusters": {
      "catalog": { "Destinations": { "d1": { "Address": "http://catalog:8080/" } } },
      "basket": { "Destinations": { "d1": { "Address": "https+http://basket" } } }
    }
  }
}
`,
    'edge/pom.xml': '<project><artifactId>edge</artifactId></project>',
    'edge/src/main/resources/application.yml': `spring:
  cloud:
    gateway:
      routes:
        - id: orders
          uri: lb://orders
          predicates:
            - Path=/orders/**
`,
    'edge/src/main/resources/application-docker.properties':
      'spring.cloud.gateway.routes[0].uri=http://users:8081\n',
  });
  t.deepEqual(edges(graph), [
    'service:edge->service:orders',
    'service:edge->service:users',
    'service:gateway->service:basket',
    'service:gateway->service:catalog',
  ]);
});

test('envoy template in a root-context build: the Dockerfile folder (named through .env) is the build folder', async (t) => {
  const { graph, evidence } = await run({
    'docker-compose.yml': `services:
  frontend-proxy:
    build:
      context: ./
      dockerfile: \${PROXY_DOCKERFILE}
    environment:
      - FRONTEND_HOST
      - FRONTEND_PORT
  other:
    build:
      context: ./
      dockerfile: src/other/Dockerfile
  frontend:
    image: shop/frontend:1
`,
    '.env':
      'PROXY_DOCKERFILE=./src/frontend-proxy/Dockerfile\nFRONTEND_HOST=frontend\nFRONTEND_PORT=8080\n',
    'src/frontend-proxy/Dockerfile':
      'FROM envoyproxy/envoy:v1.31\nCOPY ./src/frontend-proxy/envoy.tmpl.yaml envoy.tmpl.yaml\n',
    'src/other/Dockerfile': 'FROM alpine:3\n',
    'src/frontend-proxy/envoy.tmpl.yaml': `static_resources:
  clusters:
    - name: frontend
      load_assignment:
        cluster_name: frontend
        endpoints:
          - lb_endpoints:
              - endpoint:
                  address:
                    socket_address:
                      address: \${FRONTEND_HOST}
                      port_value: \${FRONTEND_PORT}
`,
  });
  t.true(edges(graph).includes('service:frontend-proxy->service:frontend'), edges(graph).join());
  const route = evidence.find((e) => e.evidence_kind === 'proxy-route')!;
  t.like(route.attributes, { port: 8080, owner: 'compose-build' });
  t.deepEqual(route.attributes.filled_from, ['FRONTEND_HOST', 'FRONTEND_PORT']);
});
