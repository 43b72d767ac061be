/**
 * Compose services running a repository folder (`working_dir` under a bind mount) and a shared Go
 * library's environment reads credited per function to the programs that call it
 * (analysis/reconcile-program-reads.ts).
 */
import test from 'ava';
import { analyzeFileMap, connections } from './helpers/pipeline';

const MOD = 'example.com/shop';

const app = (name: string, dir: string) => `
  ${name}:
    build:
      context: docker/app
    volumes:
      - ./internal:/internal
    working_dir: /internal/${dir}
    env_file:
      - .env
`;

const files = (extra: Record<string, string> = {}) => ({
  'docker-compose.yml': `services:${app('orders-api', 'orders')}${app('users-api', 'users')}${app('billing-api', 'billing')}`,
  '.env': 'ORDERS_GRPC_ADDR=orders-api:3000\nUSERS_GRPC_ADDR=users-api:3000\n',
  'docker/app/Dockerfile': 'FROM golang:1.22\nENTRYPOINT ["go", "run", "."]\n',
  'internal/common/go.mod': `module ${MOD}/internal/common\n\ngo 1.22\n`,
  'internal/common/client/grpc.go': `package client

import "os"

func NewOrdersClient() (string, error) {
	addr := os.Getenv("ORDERS_GRPC_ADDR")
	return dial(addr)
}

func NewUsersClient() (string, error) {
	addr := os.Getenv("USERS_GRPC_ADDR")
	return dial(addr)
}

func dial(addr string) (string, error) {
	return addr, nil
}
`,
  'internal/orders/go.mod': `module ${MOD}/internal/orders\n\ngo 1.22\n\nrequire ${MOD}/internal/common v0.0.0\n`,
  'internal/orders/main.go': `package main

import "${MOD}/internal/common/client"

func main() {
	users, _ := client.NewUsersClient()
	println(users)
}
`,
  'internal/users/go.mod': `module ${MOD}/internal/users\n\ngo 1.22\n`,
  'internal/users/main.go': `package main

func main() {
	println("users")
}
`,
  'internal/billing/go.mod': `module ${MOD}/internal/billing\n\ngo 1.22\n\nrequire ${MOD}/internal/common v0.0.0\n`,
  'internal/billing/main.go': `package main

import c "${MOD}/internal/common/client"

func main() {
	u, _ := c.NewUsersClient()
	println(u)
}
`,
  ...extra,
});

test('a shared env_file address calls only where the program calls the function reading it', async (t) => {
  const { graph } = await analyzeFileMap(files());
  const edges = connections(graph);
  t.true(edges.includes('service:orders-api -> service:users-api'));
  t.true(edges.includes('service:billing-api -> service:users-api'));
  // billing calls only NewUsersClient.
  t.false(edges.includes('service:billing-api -> service:orders-api'));
  // users calls nothing; orders never calls NewOrdersClient (its own address in the file).
  t.false(edges.includes('service:users-api -> service:orders-api'));
  t.false(edges.includes('service:orders-api -> service:orders-api'));
});

test('a library read a caller in the same file reaches counts for every importer', async (t) => {
  const { graph } = await analyzeFileMap(
    files({
      'internal/common/client/grpc.go': `package client

import "os"

func NewOrdersClient() (string, error) {
	return os.Getenv("ORDERS_GRPC_ADDR"), nil
}

func NewUsersClient() (string, error) {
	NewOrdersClient()
	return os.Getenv("USERS_GRPC_ADDR"), nil
}
`,
    }),
  );
  // billing calls only NewUsersClient, which calls NewOrdersClient: the read counts for all.
  t.true(connections(graph).includes('service:billing-api -> service:orders-api'));
  t.true(connections(graph).includes('service:orders-api -> service:users-api'));
  t.false(connections(graph).includes('service:users-api -> service:orders-api'));
});

test('a cloud client library reads its emulator address by name', async (t) => {
  const { graph } = await analyzeFileMap(
    files({
      'docker-compose.yml': `services:${app('users-api', 'users')}
  firestore:
    image: mtlynch/firestore-emulator
`,
      '.env': 'FIRESTORE_EMULATOR_HOST=firestore:8787\n',
    }),
  );
  t.true(
    connections(graph).some(
      (e) => e.startsWith('service:users-api -> ') && e.includes('firestore'),
    ),
  );
});

test('an import whose alias selects nothing counts every read of its package', async (t) => {
  const { graph } = await analyzeFileMap(
    files({
      // The package is named otherwise than its folder: the importer's selectors are not seen.
      'internal/users/main.go': `package main

import "${MOD}/internal/common/client"

func main() {
	u, _ := grpcclient.NewUsersClient()
	println(u)
}
`,
    }),
  );
  t.true(connections(graph).includes('service:users-api -> service:orders-api'));
});

test('a library function its own other package calls is credited to every importer', async (t) => {
  const { graph } = await analyzeFileMap(
    files({
      // The library's server package calls NewOrdersClient; users imports only the server.
      'internal/common/server/run.go': `package server

import "${MOD}/internal/common/client"

func Run() {
	client.NewOrdersClient()
}
`,
      'internal/users/main.go': `package main

import "${MOD}/internal/common/server"

func main() {
	server.Run()
}
`,
    }),
  );
  t.true(connections(graph).includes('service:users-api -> service:orders-api'));
});

test('without a bind-mounted working_dir the services stay uncoded (edges kept)', async (t) => {
  const compose = `services:${app('orders-api', 'orders')}${app('users-api', 'users')}`.replace(
    / *working_dir: \/internal\/\w+\n/g,
    '',
  );
  const { graph } = await analyzeFileMap(files({ 'docker-compose.yml': compose }));
  t.true(connections(graph).includes('service:users-api -> service:orders-api'));
});
