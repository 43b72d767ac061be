import test from 'ava';
import { analyzeFileMap, connections, entityKeys } from './helpers/pipeline';

const main = (name: string) => `package main

import "github.com/go-kratos/kratos/v2"

var (
	Name = "${name}"
)

func main() {
	app := kratos.New(
		kratos.Name(Name),
	)
	app.Run()
}
`;

const client = `package data

import "github.com/go-kratos/kratos/v2/transport/grpc"

func NewUserClient(r registry.Discovery) {
	conn, _ := grpc.DialInsecure(
		context.Background(),
		grpc.WithEndpoint("discovery:///acme.user.service"),
		grpc.WithDiscovery(r),
	)
	_ = conn
}
`;

const repo = {
  'go.mod': 'module github.com/acme/shop\n\ngo 1.17\n',
  'app/user/service/cmd/server/main.go': main('acme.user.service'),
  'app/shop/interface/cmd/server/main.go': main('acme.shop.interface'),
  'app/shop/interface/internal/data/data.go': client,
  'pkg/util/util.go': 'package util\n',
};

test('each application folder of a mono-repo Go module is a unit, named by its path', async (t) => {
  const { graph } = await analyzeFileMap(repo);
  const keys = entityKeys(graph);
  t.true(keys.includes('service:user-service'));
  t.true(keys.includes('service:shop-interface'));
  t.false(keys.includes('service:root'));
  t.false(keys.includes('service:shop'));
});

test('a Kratos client dialling discovery:///<name> connects to the unit registered as kratos.Name', async (t) => {
  const { graph } = await analyzeFileMap(repo);
  t.deepEqual(connections(graph), ['service:shop-interface -> service:user-service']);
});

test('one application below a module stays the module unit', async (t) => {
  const { graph } = await analyzeFileMap({
    'go.mod': 'module github.com/acme/shop\n\ngo 1.17\n',
    'app/user/service/cmd/server/main.go': main('acme.user.service'),
  });
  t.false(entityKeys(graph).includes('service:user-service'));
});

test('a web package named like an application is renamed after its folder, and not joined to it', async (t) => {
  const { graph } = await analyzeFileMap({
    ...repo,
    'app/shop/admin/cmd/server/main.go': main('acme.shop.admin'),
    'web/admin/package.json': JSON.stringify({ name: 'shop-admin', scripts: { start: 'x' } }),
    'web/admin/src/index.js': 'console.log(1);\n',
  });
  const keys = entityKeys(graph);
  t.true(keys.includes('service:shop-admin'));
  t.true(keys.includes('service:web-admin'));
  t.false(keys.includes('service:app-shop-admin'));
});

const compose = (dsn: string) => ({
  ...repo,
  'app/user/service/configs/config.yaml': `data:\n  database:\n    driver: mysql\n    source: ${dsn}\n`,
  'deploy/docker-compose.yaml': `services:
  user-service:
    image: acme/shop-user-service:1.0
    depends_on:
      - user-db
  user-db:
    image: mysql:8
`,
});

test('a prebuilt application whose settings name its store at a loopback address uses the store it depends on', async (t) => {
  const { graph } = await analyzeFileMap(compose('root:pw@tcp(127.0.0.1:3306)/test'));
  t.true(connections(graph).includes('service:user-service -> datastore:user-db'));
});

test('an application whose settings name another address of the engine does not', async (t) => {
  const { graph } = await analyzeFileMap(compose('root:pw@tcp(mysql.example.com:3306)/test'));
  t.false(connections(graph).includes('service:user-service -> datastore:user-db'));
});

const template = (arg: string) => `FROM golang:1.16 AS builder
${arg}
COPY . /src
WORKDIR /src/app/\${APP_RELATIVE_PATH}
RUN make build

FROM debian:stable-slim
${arg}
COPY --from=builder /src/app/\${APP_RELATIVE_PATH}/bin /app
EXPOSE 8000
CMD ["./server"]
`;

test('a shared Dockerfile building the folder a build argument names is a recipe, not a service', async (t) => {
  const { graph } = await analyzeFileMap({
    ...repo,
    'deploy/build/Dockerfile': template('ARG APP_RELATIVE_PATH'),
  });
  t.false(entityKeys(graph).includes('service:deploy'));
  // With a default, it builds that one folder: a service of its own.
  const fixed = await analyzeFileMap({
    ...repo,
    'deploy/build/Dockerfile': template('ARG APP_RELATIVE_PATH=user/service'),
  });
  t.true(entityKeys(fixed.graph).includes('service:deploy'));
});
