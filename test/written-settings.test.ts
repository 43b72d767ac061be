/**
 * Settings written into a shared volume (issue 23, session 13; docs/decisions.md, "Settings
 * written into a shared volume"): a one-shot init container is given addresses in its
 * environment and its command writes them into a file on a named volume; the long-running
 * containers of the same image that mount the volume and wait for it to complete read them from
 * there. Built in memory and run through the analyzers and reconcile as an audit does.
 */
import test from 'ava';
import { analyzeFiles, connections, verifiable } from './helpers/pipeline';
import type { SourceFile } from '../analysis/evidence';

const COMPOSE = `x-app: &app
  image: acme/app:1.0
  volumes:
    - shared:/srv/app/shared
  depends_on:
    setup:
      condition: service_completed_successfully
services:
  setup:
    image: acme/app:1.0
    restart: on-failure
    entrypoint: ["bash", "-c"]
    command:
      - >
        app set-config db_host $$DB_HOST;
        app set-config cache "redis://$\${CACHE}";
    environment:
      DB_HOST: db
      CACHE: cache:6379
      MAILER: smtp:25
    volumes:
      - shared:/srv/app/shared
  web:
    <<: *app
    command: app serve
  worker:
    <<: *app
    command: app worker
    environment:
      QUEUE_URL: redis://queue:6379
  nosetup:
    image: acme/app:1.0
    command: app report
    volumes:
      - shared:/srv/app/shared
  sidecar:
    image: acme/sidecar:2
    volumes:
      - shared:/data
    depends_on:
      setup:
        condition: service_completed_successfully
  db:
    image: postgres:16
  cache:
    image: redis:7
  queue:
    image: redis:7
  smtp:
    image: acme/smtp:1
volumes:
  shared:
`;

const files = (compose = COMPOSE): SourceFile[] => [{ path: 'docker-compose.yml', text: compose }];

test('addresses a one-shot writes into a shared volume are connections of the readers that wait for it', async (t) => {
  const { graph } = await analyzeFiles(files());
  const got = connections(graph);
  for (const reader of ['web', 'worker']) {
    t.true(got.includes(`service:${reader} -> datastore:db`), reader);
    t.true(got.includes(`service:${reader} -> datastore:cache`), reader);
  }
  // The worker's own address stays its own; the writer keeps its edges, as the one-shot job it
  // is (others wait for it to complete: docs/decisions.md, session 14), not as a service.
  t.true(got.includes('service:worker -> datastore:queue'));
  t.false(got.includes('service:web -> datastore:queue'));
  t.true(got.includes('job:setup -> datastore:db'));
  t.false(got.some((c) => c.startsWith('service:setup ')));
});

test('only variables the writer command names are carried, and only to same-image readers that wait for it', async (t) => {
  const got = connections((await analyzeFiles(files())).graph);
  // MAILER is in the writer's environment but its command never writes it.
  t.false(got.some((c) => c.startsWith('service:web ') && c.endsWith(':smtp')));
  // Mounts the volume but does not wait for the writer.
  t.false(got.some((c) => c.startsWith('service:nosetup ')));
  // Waits for the writer and mounts the volume, but runs another image.
  t.false(got.some((c) => c.startsWith('service:sidecar ')));
});

test('a written address is weaker than an address the reader is given itself, cited at the writer line and the reader mount', async (t) => {
  const f = files();
  const { graph, evidence } = await analyzeFiles(f);
  const edge = (s: string, d: string) =>
    graph.relationships.find(
      (r) => r.kind === 'connects_to' && r.source_key === s && r.target_key === d,
    )!;
  const written = edge('service:web', 'datastore:db');
  const own = edge('service:worker', 'datastore:queue');
  t.true(Number(written.confidence) < Number(own.confidence));
  const byId = new Map(evidence.map((e) => [e.id, e]));
  const cited = written.evidence_ids.map((id) => byId.get(id)!);
  const lines = cited.map((e) => f[0]!.text.split('\n')[e.location.start_line - 1]!.trim());
  t.true(lines.includes('DB_HOST: db'));
  t.true(lines.includes('- shared:/srv/app/shared'));
  for (const e of cited) t.true(verifiable(f, e));
});

test('without a completion dependency nothing is carried', async (t) => {
  const compose = COMPOSE.replace(
    / {2}depends_on:\n {4}setup:\n {6}condition: service_completed_successfully\n/,
    '',
  );
  const got = connections((await analyzeFiles(files(compose))).graph);
  t.false(got.includes('service:web -> datastore:db'));
  // The sidecar still waits for it: still the one-shot job, still with its own edges.
  t.true(got.includes('job:setup -> datastore:db'));
});
