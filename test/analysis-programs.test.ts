/**
 * One image, many programs (issue 23, session 11): a Go module with several main packages built
 * once and run by compose services with different entrypoints, the addresses of a shared
 * config.json reached through the keys each program reads, calls through a service registry by
 * name, and the folders that are no deployed unit (tool pins, idle toolbox pods).
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import { classifyPath } from '../domain/audits/classify';
import { analyzeFiles, connections, entityKeys, verifiable } from './helpers/pipeline';

const files = (m: Record<string, string>): SourceFile[] =>
  Object.entries(m).map(([path, text]) => ({ path, text }));

const main = (program: string, keys: string[], imports: string[]) => `package main

import (
	"encoding/json"
	"os"
${imports.map((i) => `\t"example.com/shop/${i}"`).join('\n')}
)

func main() {
	var result map[string]string
	data, _ := os.ReadFile("config.json")
	json.Unmarshal(data, &result)
${keys.map((k) => `\t_ = result["${k}"]`).join('\n')}
	// ${program}
}
`;

const SHOP = files({
  'go.mod': 'module example.com/shop\n\ngo 1.21\n',
  'config.json': `{
  "consulAddress": "consul:8500",
  "OrdersMongoAddress": "orders-db:27017",
  "CartMemcAddress": "cart-cache:11211",
  "CartMongoAddress": "cart-db:27017",
  "GhostAddress": "ghost:4000",
  "OrdersPort": "8081"
}
`,
  // One deployment's copy of the settings, deeper in the tree: the reads name the root file.
  'openshift/configmaps/config.json':
    '{\n  "CartMongoAddress": "cart-db.shop.svc.cluster.local:27018"\n}\n',
  'cmd/orders/main.go': main(
    'orders',
    ['OrdersMongoAddress', 'consulAddress', 'OrdersPort'],
    ['services/orders'],
  ),
  'cmd/cart/main.go': main(
    'cart',
    ['CartMemcAddress', 'CartMongoAddress', 'consulAddress', 'GhostAddress'],
    ['services/cart'],
  ),
  // A load generator beside the services: no deployment runs it.
  'cmd/loadgen/main.go': main('loadgen', ['CartMemcAddress'], ['registry']),
  'registry/client.go': `package registry

type Client struct{}

func (c *Client) Register(name string, id string, port int) error { return nil }
`,
  'services/orders/server.go': `package orders

import "example.com/shop/registry"

const name = "srv-orders"

type Server struct{ Registry *registry.Client }

func (s *Server) Run() error {
	pb.RegisterOrdersServer(srv, s)
	s.metricRegistry.Register("orders-latency", gauge)
	return s.Registry.Register(name, "id-1", 8081)
}
`,
  'services/cart/server.go': `package cart

import (
	"fmt"
	"example.com/shop/registry"
)

type Server struct{ Registry *registry.Client; ConsulAddr string }

func (s *Server) Run() error {
	s.Registry.Register("srv-cart", "id-2", 8082)
	return s.initOrdersClient("srv-orders")
}

func (s *Server) initOrdersClient(name string) error {
	_, err := dialer.Dial(fmt.Sprintf("consul://%s/%s", s.ConsulAddr, name))
	return err
}
`,
  // bingo's folder of pinned build tools: a placeholder go.mod and one .mod per tool.
  '.bingo/go.mod': "module _ // Fake go.mod auto-created by 'bingo'\n",
  '.bingo/protoc-gen-go.mod': 'module _\n\nrequire google.golang.org/protobuf v1.31.0\n',
  'docker-compose.yml': `services:
  consul:
    image: hashicorp/consul:1.15
  orders-db:
    image: mongo:6
  cart-cache:
    image: memcached:1.6
  cart-db:
    image: mongo:6
  orders:
    build: .
    image: acme/shop:latest
    entrypoint: orders
    configs:
      - source: server_config
        target: /config.json
  cart:
    build: .
    image: acme/shop:latest
    entrypoint: ["./cart"]
    configs:
      - source: server_config
        target: /config.json
configs:
  server_config:
    file: ./config.json
`,
});

test('one image, many entrypoints: each program connects to what its own code reads', async (t) => {
  const { graph, evidence } = await analyzeFiles(SHOP);
  const c = connections(graph);
  for (const edge of [
    'service:orders -> datastore:orders-db',
    'service:orders -> service:consul',
    'service:cart -> datastore:cart-cache',
    'service:cart -> service:consul',
  ])
    t.true(c.includes(edge), edge);
  // A program never reads the other's keys; the mounted file alone connects no one.
  t.false(c.includes('service:orders -> datastore:cart-cache'));
  t.false(c.includes('service:cart -> datastore:orders-db'));
  // The Mongo URL on the file's lines (root and copy) is no connection of the whole unit.
  t.true(c.includes('service:cart -> datastore:cart-db'));
  t.false(c.includes('service:orders -> datastore:cart-db'));
  // A value naming a host no deployment declares is no dependency.
  t.false(c.some((e) => e.includes('ghost')));
  t.false(entityKeys(graph).includes('service:ghost'));
  // The read is cited at the code line, with the configuration line beside it.
  const read = evidence.find(
    (e) => e.evidence_kind === 'config-key-read' && e.attributes.key === 'OrdersMongoAddress',
  );
  t.is(read?.location.path, 'cmd/orders/main.go');
  t.is(read?.attributes.config_path, 'config.json');
  t.is(read?.attributes.config_line, 3);
  const cartDb = evidence.find(
    (e) => e.evidence_kind === 'config-key-read' && e.attributes.key === 'CartMongoAddress',
  );
  t.deepEqual(cartDb?.attributes.config_copies, ['openshift/configmaps/config.json:2']);
  t.true(read !== undefined && verifiable(SHOP, read));
});

test('registry names: the unit that dials a registered name calls the unit registering it', async (t) => {
  const { graph, evidence } = await analyzeFiles(SHOP);
  const c = connections(graph);
  t.true(c.includes('service:cart -> service:orders'));
  t.false(c.includes('service:orders -> service:cart'));
  const orders = graph.entities.find((e) => e.canonical_key === 'service:orders');
  t.true(JSON.stringify(orders?.attributes.aliases ?? []).includes('srv-orders'));
  // The registered names: from the constant and from the literal; a gRPC RegisterXServer and a
  // metrics registry register no service.
  const names = evidence
    .filter((e) => e.evidence_kind === 'registry-register')
    .map((e) => e.attributes.name)
    .sort();
  t.deepEqual(names, ['srv-cart', 'srv-orders']);
  t.false(entityKeys(graph).includes('service:srv-orders'));
});

test('programs no deployment runs, and tool-pinning Go modules, are no services', async (t) => {
  const { graph, evidence } = await analyzeFiles(SHOP);
  const programs = evidence
    .filter((e) => e.evidence_kind === 'program-declared')
    .map((e) => e.attributes.program)
    .sort();
  t.deepEqual(programs, ['cart', 'loadgen', 'orders']);
  // Each service runs its program, not the unit: no build conflict, no entity for the unit.
  t.is(graph.conflicts, undefined);
  const orders = graph.entities.find((e) => e.canonical_key === 'service:orders');
  t.is(orders?.attributes.runs_program, 'orders');
  const keys = entityKeys(graph);
  t.false(keys.includes('service:shop'));
  t.false(keys.includes('service:.bingo'));
  t.false(keys.includes('service:loadgen'));
  // The load generator's read connects no deployed service to the cache.
  const c = connections(graph);
  t.deepEqual(
    c.filter((e) => e.endsWith('datastore:cart-cache')),
    ['service:cart -> datastore:cart-cache'],
  );
});

test('a single-program module keeps its code on the unit; an unknown entrypoint changes nothing', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'go.mod': 'module example.com/api\n',
      'config.json': '{ "DbAddress": "db:5432" }\n',
      'main.go': 'package main\n\nfunc main() {\n\t_ = result["DbAddress"]\n}\n',
      'docker-compose.yml': `services:
  db:
    image: postgres:16
  api:
    build: .
    entrypoint: ["/bin/sh", "-c", "./api"]
`,
    }),
  );
  t.true(connections(graph).includes('service:api -> datastore:db'));
});

test('a workload whose containers only sleep is a toolbox pod, not a service', async (t) => {
  const deployment = (name: string, container: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  selector:
    matchLabels: { app: ${name} }
  template:
    metadata:
      labels: { app: ${name} }
    spec:
      containers:
${container}
`;
  const { graph } = await analyzeFiles(
    files({
      'k8s/toolbox.yaml': deployment(
        'toolbox',
        `        - name: toolbox
          image: acme/load-client
          command: ["/bin/sh"]
          args: ["-c", "sleep 365d"]`,
      ),
      'k8s/web.yaml': deployment(
        'web',
        `        - name: web
          image: acme/web:1.0
          command: ["/bin/sh"]
          args: ["-c", "./web --port 80"]`,
      ),
    }),
  );
  const keys = entityKeys(graph);
  t.false(keys.includes('service:toolbox'));
  t.true(keys.includes('service:web'));
});

test("a program's config.json is code to read; a tool's settings in a dot-folder are not", (t) => {
  t.is(classifyPath('config.json'), 'code');
  t.is(classifyPath('svc/config.production.json'), 'code');
  t.is(classifyPath('.agents/config.json'), null);
  t.is(classifyPath('.vscode/settings.json'), null);
  t.is(classifyPath('configuration.json'), null);
});

test('kubernetes: workloads running the unit image with a command naming a program run it', async (t) => {
  const deployment = (name: string, image: string, command?: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  selector:
    matchLabels: { app: ${name} }
  template:
    metadata:
      labels: { app: ${name} }
    spec:
      containers:
        - name: ${name}
          image: ${image}
${command ? `          command: ["${command}"]\n` : ''}`;
  const code = SHOP.filter(
    (f) => f.path.endsWith('.go') || /(^|\/)(go\.mod|config\.json)$/.test(f.path),
  );
  const { graph } = await analyzeFiles([
    ...code,
    ...files({
      'k8s/orders.yaml': deployment('orders', 'acme/shop:1.0', './orders'),
      'k8s/cart.yaml': deployment('cart', 'acme/shop:1.0', '/usr/local/bin/cart'),
      'k8s/orders-db.yaml': deployment('orders-db', 'mongo:6'),
      'k8s/cart-cache.yaml': deployment('cart-cache', 'memcached:1.6'),
      'k8s/cart-db.yaml': deployment('cart-db', 'mongo:6'),
    }),
  ]);
  const c = connections(graph);
  t.true(c.includes('service:orders -> datastore:orders-db'));
  t.true(c.includes('service:cart -> datastore:cart-cache'));
  t.true(c.includes('service:cart -> service:orders'));
  t.false(c.includes('service:orders -> datastore:cart-cache'));
  t.false(c.includes('service:cart -> datastore:orders-db'));
  t.false(entityKeys(graph).includes('service:shop'));
});

test('a service building the unit with no program entrypoint is the unit; its sibling runs one program', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'go.mod': 'module example.com/app\n',
      'config.json': '{ "JobsDbAddress": "jobs-db:5432", "CliApiUrl": "http://api:8080" }\n',
      'cmd/worker/main.go': main('worker', ['JobsDbAddress'], []),
      'cmd/cli/main.go': main('cli', ['CliApiUrl'], []),
      'docker-compose.yml': `services:
  jobs-db:
    image: postgres:16
  api:
    build: .
  worker:
    build: .
    entrypoint: worker
`,
    }),
  );
  const c = connections(graph);
  t.true(c.includes('service:worker -> datastore:jobs-db'));
  t.false(c.includes('service:api -> datastore:jobs-db'));
  // The unit is the service that builds it whole; the command-line tool's read is no one's.
  const api = graph.entities.find((e) => e.canonical_key === 'service:api');
  t.true(JSON.stringify(api?.attributes.aliases ?? []).includes('service:app'));
  t.false(c.some((e) => e.startsWith('service:api ->')));
});
