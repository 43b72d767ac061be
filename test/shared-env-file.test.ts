/**
 * Issue 23, session 12: a project-wide compose `env_file` handed to a dependency (an emulator
 * built from the repository) holds its dependents' addresses: no call from it to them. And a
 * Terraform module stamped out per service names each instance from the call's inputs
 * (`name = "${var.name}-${var.protocol}"`), so it is the compose unit of the same name.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import { instanceName } from '../analysis/cloud/terraform-modules';
import { analyzeFiles, connections, entityKeys } from './helpers/pipeline';

const files = (m: Record<string, string>): SourceFile[] =>
  Object.entries(m).map(([path, text]) => ({ path, text }));

const COMPOSE = `services:
  api:
    image: example/api:1
    env_file:
      - .env
    depends_on:
      - docstore
  docstore:
    build:
      context: docker/docstore
    env_file:
      - .env
`;

const ENV = `DOCSTORE_HOST=docstore:8787
API_GRPC_ADDR=api:3000
`;

test('a dependency handed the shared env_file does not call its dependents', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'docker-compose.yml': COMPOSE,
      '.env': ENV,
      'docker/docstore/Dockerfile': 'FROM node:20-alpine\nCMD ["./start.sh"]\n',
    }),
  );
  const edges = connections(graph);
  t.true(edges.includes('service:api -> service:docstore'), edges.join('\n'));
  t.false(edges.includes('service:docstore -> service:api'), edges.join('\n'));
});

test('without depends_on the shared file still says nothing of direction: edge kept', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'docker-compose.yml': COMPOSE.replace('    depends_on:\n      - docstore\n', ''),
      '.env': ENV,
      'docker/docstore/Dockerfile': 'FROM node:20-alpine\nCMD ["./start.sh"]\n',
    }),
  );
  t.true(connections(graph).includes('service:docstore -> service:api'));
});

test('a module template name built from call inputs names the instance', (t) => {
  t.is(
    instanceName('${var.name}-${var.protocol}', { name: 'orders', protocol: 'grpc' }),
    'orders-grpc',
  );
  t.is(instanceName('${var.name}', { name: 'orders' }), 'orders');
  t.is(instanceName('${var.name}-${var.protocol}', { name: 'orders' }), null);
  t.is(instanceName('${var.name}', { name: '${var.other}' }), null);
  t.is(instanceName('${local.name}', { name: 'orders' }), null);
  t.is(instanceName('orders', { name: 'orders' }), null);
});

test('a Cloud Run service stamped from a module is the compose unit of the same name', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'docker-compose.yml': `services:
  orders-grpc:
    image: example/orders:1
  orders-http:
    image: example/orders:1
`,
      'terraform/main.tf': `module cloud_run_orders_grpc {
  source   = "./service"
  name     = "orders"
  protocol = "grpc"
}

module cloud_run_orders_http {
  source   = "./service"
  name     = "orders"
  protocol = "http"
}
`,
      'terraform/service/service.tf': `variable name {}
variable protocol {}

resource "google_cloud_run_service" "service" {
  name     = "\${var.name}-\${var.protocol}"
  location = "europe-west1"

  template {
    spec {
      containers {
        image = "gcr.io/example/\${var.name}"
      }
    }
  }
}
`,
    }),
  );
  const keys = entityKeys(graph);
  t.true(keys.includes('service:orders-grpc'), keys.join('\n'));
  t.true(keys.includes('service:orders-http'), keys.join('\n'));
  t.false(
    keys.some((k) => k.includes('cloud-run')),
    keys.join('\n'),
  );
});
