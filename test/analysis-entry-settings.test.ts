/**
 * Per-unit entries of a shared JSON settings file read by the C++ programs that name them, Lua
 * scripts opening clients by host, one-shot compose services others wait for, and example
 * compose files (issue 23, session 14).
 */
import test from 'ava';
import { analyzeFileMap, connections, entityKeys } from './helpers/pipeline';

const SETTINGS = `{
  "orders-service": { "addr": "orders-service", "port": 9090 },
  "users-service": { "addr": "users-service", "port": 9090 },
  "billing-service": { "addr": "billing-service", "port": 9090 },
  "orders-mongodb": { "addr": "orders-mongodb", "port": 27017 },
  "secret": "s"
}
`;

const HELPER = `#include <string>
mongoc_client_pool_t* init_mongodb_client_pool(const json &config_json, const std::string &service_name, int size) {
  std::string addr = config_json[service_name + "-mongodb"]["addr"];
  int port = config_json[service_name + "-mongodb"]["port"];
  return nullptr;
}
`;

const ORDERS = `#include "../utils_mongodb.h"
int main() {
  json config_json;
  load_config_file("config/service-config.json", &config_json);
  int port = config_json["orders-service"]["port"];
  std::string users_addr = config_json["users-service"]["addr"];
  auto pool = init_mongodb_client_pool(config_json, "orders", 128);
  // config_json["billing-service"] is not read here
}
`;

const TOOL = `int main() {
  json config_json;
  std::string addr = config_json["billing-service"]["addr"];
}
`;

const compose = (extra = '') => `services:
  orders-service:
    image: acme/shop:latest
    entrypoint: OrdersService
    volumes:
      - ./config:/shop/config
  users-service:
    image: acme/shop:latest
    entrypoint: UsersService
    volumes:
      - ./config:/shop/config
  billing-service:
    image: acme/shop:latest
    entrypoint: BillingService
    volumes:
      - ./config:/shop/config
  orders-mongodb:
    image: mongo:4.4
  gateway:
    image: openresty/openresty
    volumes:
      - ./gateway/lua-scripts:/usr/local/openresty/nginx/lua-scripts
${extra}`;

const SHOP: Record<string, string> = {
  'config/service-config.json': SETTINGS,
  'src/utils_mongodb.h': HELPER,
  'src/OrdersService/CMakeLists.txt': 'add_executable(\n  OrdersService\n  OrdersService.cpp\n)\n',
  'src/OrdersService/OrdersService.cpp': ORDERS,
  'src/UsersService/CMakeLists.txt': 'add_executable(UsersService UsersService.cpp)\n',
  'src/UsersService/UsersService.cpp':
    'int main() { int port = config_json["users-service"]["port"]; }\n',
  'src/BillingService/CMakeLists.txt': 'add_executable(BillingService BillingService.cpp)\n',
  'src/BillingService/BillingService.cpp': 'int main() { return 0; }\n',
  'tools/Loader/CMakeLists.txt': 'add_executable(Loader Loader.cpp)\n',
  'tools/Loader/Loader.cpp': TOOL,
  'gateway/lua-scripts/api/order.lua': `local GenericObjectPool = require "GenericObjectPool"
local k8s_suffix = os.getenv("fqdn_suffix") or ""
local function place()
  -- local old = GenericObjectPool:connection(OldClient, "billing-service", 9090)
  local client = GenericObjectPool:connection(
      OrdersServiceClient, "orders-service" .. k8s_suffix, 9090)
  client:Place()
end
`,
  'scripts/lua/unused.lua':
    'local c = GenericObjectPool:connection(UsersServiceClient, "users-service", 9090)\n',
  'docker-compose.yml': compose(),
};

test('a C++ program reaches the settings entries its own code indexes, directly or through a helper', async (t) => {
  const { graph } = await analyzeFileMap(SHOP);
  const edges = connections(graph);
  t.true(edges.includes('service:orders-service -> service:users-service'));
  t.true(edges.includes('service:orders-service -> datastore:orders-mongodb'));
  // An entry only mentioned in a comment, or read by a program no deployment runs, is no call.
  t.false(edges.includes('service:orders-service -> service:billing-service'));
  t.false(edges.some((e) => e.endsWith('-> service:billing-service')));
  // Mounting the whole file is not reading every entry; its own entry is no call.
  t.false(edges.some((e) => e.startsWith('service:billing-service ->')));
  t.false(edges.includes('service:orders-service -> service:orders-service'));
  t.false(edges.some((e) => e.startsWith('service:users-service ->')));
});

test('a Lua script opens a client by host for the server that mounts it', async (t) => {
  const { graph } = await analyzeFileMap(SHOP);
  const edges = connections(graph);
  t.true(edges.includes('service:gateway -> service:orders-service'));
  // A commented call, and a script no deployment mounts, are no calls.
  t.false(edges.includes('service:gateway -> service:billing-service'));
  t.false(edges.includes('service:gateway -> service:users-service'));
});

test('a compose service others wait to complete is a one-shot job, not a service', async (t) => {
  const { graph } = await analyzeFileMap({
    ...SHOP,
    'docker-compose.yml': compose(`  setup:
    image: acme/shop:latest
    entrypoint: [ "python3", "./scripts/config.py" ]
  worker:
    image: acme/worker
    depends_on:
      setup:
        condition: service_completed_successfully
`),
  });
  const keys = entityKeys(graph);
  t.false(keys.includes('service:setup'));
  t.true(keys.includes('service:worker'));
});

test("an example's compose file is no deployment when the system is deployed otherwise", async (t) => {
  const { graph } = await analyzeFileMap({
    ...SHOP,
    'vendor/tracer/example/hello/docker-compose.yaml': `services:
  hello-server:
    build: .
    ports:
      - "8080:8080"
`,
  });
  t.false(entityKeys(graph).includes('service:hello-server'));
  t.true(entityKeys(graph).includes('service:orders-service'));
});
