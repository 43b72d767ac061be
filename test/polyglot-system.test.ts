/**
 * System test on a polyglot shop (8 services in TypeScript/JavaScript, Go and Python; compose and
 * Kubernetes; Terraform datastores; GitHub Actions): a real audit through the API finds exactly
 * the service-to-service and service-to-datastore edges an engineer reads in the files, each
 * citing evidence whose lines and hash match the file.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, type Tenant } from './helpers/factories';
import { createRepo, type TestRepo } from './helpers/git';
import { call } from './helpers/http';
import { EXPECTED_EDGES, polyglotFiles, SERVICES } from './fixtures/polyglot';

let h: AuditHarness;
let tenant: Tenant;
let repo: TestRepo;
let repositoryId: string;

test.before(async () => {
  h = await startAuditHarness();
  tenant = await createTenant(h.app.services.db);
  repo = createRepo(polyglotFiles());
  const created = await call(h.app.url, 'POST', `${ws()}/repositories`, {
    token: tenant.token,
    body: { name: 'polyglot-shop', url: `file://${repo.dir}` },
  });
  repositoryId = created.body.id;
});

test.after.always(async () => {
  await h?.close();
  repo?.remove();
});

const ws = () => `/v1/workspaces/${tenant.workspaceId}`;
const kindOf = (key: string) => key.slice(0, key.indexOf(':'));
const STORES = new Set(['datastore', 'queue', 'bucket']);

/** sha256 of lines start..end of the file at the audited commit, as analysis/evidence.ts computes it. */
function linesSha(file: string, start: number, end: number): string {
  const text = fs.readFileSync(path.join(repo.dir, file), 'utf8');
  const lines = text
    .split('\n')
    .slice(start - 1, end)
    .join('\n');
  return crypto.createHash('sha256').update(lines).digest('hex');
}

test('the audit finds exactly the expected edges, each cited by evidence matching the file', async (t) => {
  const started = await call(h.app.url, 'POST', `${ws()}/audits`, {
    token: tenant.token,
    body: { repository_id: repositoryId },
  });
  t.is(started.status, 202);
  const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, started.body.id);
  t.is(done.body.status, 'completed', JSON.stringify(done.body.stages));
  const arch = await call(h.app.url, 'GET', `${ws()}/audits/${started.body.id}/architecture`, {
    token: tenant.token,
  });
  t.is(arch.status, 200);
  const truth = arch.body;
  t.deepEqual(truth.sources, ['code', 'cloud', 'cicd']);
  t.is(truth.source_coverage, '1.0000');

  // The 8 services, each one entity known from its code and its deployment configuration.
  const entity = (key: string) => truth.entities.find((e: any) => e.canonical_key === key);
  for (const svc of SERVICES) {
    const e = entity(`service:${svc}`);
    t.truthy(e, `service:${svc}`);
    t.deepEqual(e?.sources, ['cloud', 'code'], `${svc} is known from code and cloud`);
    t.deepEqual(e?.contradictions, [], `${svc}: compose and Kubernetes agree`);
  }
  t.is(truth.entities.filter((e: any) => e.kind === 'service').length, SERVICES.length);
  // The Terraform-managed datastores, each the same entity compose runs locally.
  for (const key of ['datastore:orders-db', 'datastore:catalog-db', 'datastore:cart-cache']) {
    const files = new Set(
      truth.evidence
        .filter((e: any) => entity(key)?.evidence_ids.includes(e.id))
        .map((e: any) => e.location.path),
    );
    t.true(files.has('infra/terraform/main.tf') && files.has('docker-compose.yml'), key);
  }
  t.truthy(entity('queue:order-events'));
  t.truthy(entity('bucket:report-archive'));

  const edges = truth.relationships.filter(
    (r: any) =>
      kindOf(r.source_key) === 'service' &&
      (kindOf(r.target_key) === 'service' || STORES.has(kindOf(r.target_key))),
  );
  t.deepEqual(edges.map((r: any) => r.canonical_key).sort(), EXPECTED_EDGES);

  const byId = new Map<string, any>(truth.evidence.map((e: any) => [e.id, e]));
  for (const edge of edges) {
    t.true(edge.evidence_ids.length > 0, edge.canonical_key);
    const cited = edge.evidence_ids.map((id: string) => byId.get(id));
    t.true(cited.every(Boolean), `${edge.canonical_key} cites stored evidence`);
    const matching = cited.filter(
      (e: any) =>
        fs.existsSync(path.join(repo.dir, e.location.path)) &&
        e.location.start_line >= 1 &&
        e.location.end_line >= e.location.start_line &&
        linesSha(e.location.path, e.location.start_line, e.location.end_line) === e.content_sha256,
    );
    t.true(matching.length >= 1, `${edge.canonical_key} has evidence matching its file`);
    // And the cited line really names the target (its host or its name).
    const target = edge.target_key.slice(edge.target_key.indexOf(':') + 1);
    t.true(
      matching.some((e: any) => {
        const text = fs.readFileSync(path.join(repo.dir, e.location.path), 'utf8');
        return text
          .split('\n')
          .slice(e.location.start_line - 1, e.location.end_line)
          .join('\n')
          .includes(target);
      }),
      `${edge.canonical_key}: a cited line names ${target}`,
    );
  }

  // Nothing in this consistent system is uncertain: no case is opened for it.
  const cases = await call(
    h.app.url,
    'GET',
    `${ws()}/uncertainty-cases?repository_id=${repositoryId}`,
    {
      token: tenant.token,
    },
  );
  t.is(cases.status, 200);
  t.deepEqual(
    cases.body.items.map((c: any) => `${c.reason} ${c.subject_key}`),
    [],
  );
  t.like(cases.body, { open_count: 0, blocking_count: 0, unassigned_count: 0 });
});
