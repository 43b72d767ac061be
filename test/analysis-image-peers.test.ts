/**
 * Two idioms that named false entities (issue 23, session 16; docs/decisions.md, "Containers of
 * one image run one engine; a repeated Terraform resource named per instance names no entity"):
 * a second-site copy of a database container, running the same unknown image with no port of its
 * own, is still that database; and `resource "aws_ecs_service" "service" { for_each = ...; name =
 * each.value.family }` names no service called `service`. Fixtures are our own.
 */
import test from 'ava';
import { analyzeFileMap, connections, entityKeys } from './helpers/pipeline';

const COMPOSE = `services:
  ledger-db:
    image: ledger-db
    ports: ["5432:5432"]
    environment:
      - POSTGRES_DB=ledger
  ledger-db-east:
    image: ledger-db
    command: ["./bin/start.sh"]
    environment:
      - POSTGRES_DB=ledger
  ledger:
    image: acme/ledger:1
    ports: ["9000:9000"]
    links: [ledger-db]
  ledger-east:
    image: acme/ledger:1
    links: [ledger-db-east]
  worker:
    image: acme/ledger:1
    environment:
      - POSTGRES_DB=ledger
  cache-a:
    image: shared-box
    expose: ["6379"]
  cache-b:
    image: shared-box
    expose: ["5432"]
  cache-c:
    image: shared-box
`;

test('a container running the same unknown image as a declared database is that database', async (t) => {
  const { graph } = await analyzeFileMap({ 'deploy/docker-compose.yaml': COMPOSE });
  const keys = entityKeys(graph);
  t.true(keys.includes('datastore:ledger-db'), keys.join('\n'));
  t.true(keys.includes('datastore:ledger-db-east'), keys.join('\n'));
  t.false(keys.includes('service:ledger-db-east'), keys.join('\n'));
  const east = graph.entities.find((e) => e.canonical_key === 'datastore:ledger-db-east')!;
  t.is(east.attributes.engine, 'postgres');
  t.regex(String(east.attributes.engine_clue), /runs image ledger-db, as does ledger-db/);
  t.true(
    connections(graph).includes('service:ledger-east -> datastore:ledger-db-east'),
    connections(graph).join('\n'),
  );
  // Negative: an application image stays a service (its POSTGRES_DB is a client's setting), and
  // an image whose containers' clues disagree (redis and postgres ports) types none of them.
  t.true(keys.includes('service:worker'), keys.join('\n'));
  t.true(keys.includes('service:ledger-east'), keys.join('\n'));
  t.true(keys.includes('service:cache-c'), keys.join('\n'));
});

const TERRAFORM = `resource "aws_ecs_cluster" "main" {
  name = "shop"
}
resource "aws_ecs_service" "service" {
  for_each        = var.tasks
  name            = each.value.family
  cluster         = aws_ecs_cluster.main.arn
  desired_count   = 1
}
resource "aws_ecs_service" "worker" {
  count = 2
  name  = "worker-\${count.index}"
  cluster = aws_ecs_cluster.main.arn
}
resource "aws_ecs_service" "api" {
  count   = var.enabled ? 1 : 0
  name    = var.api_name
  cluster = aws_ecs_cluster.main.arn
}
`;

test('a repeated Terraform resource named per instance names no entity after its label', async (t) => {
  const { graph } = await analyzeFileMap({ 'infra/main.tf': TERRAFORM });
  const keys = entityKeys(graph);
  t.false(keys.includes('service:service'), keys.join('\n'));
  t.false(keys.includes('service:worker'), keys.join('\n'));
  // Negative: a resource created at most once (`count` as a switch) keeps its label's entity.
  t.true(keys.includes('service:api'), keys.join('\n'));
});
