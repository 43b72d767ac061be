/**
 * Evidence ingestion on the real stack: batches checked record by record (every invalid index
 * reported), bounded in records and bytes (at the bound and one past it), idempotent per batch
 * key, listed and read with ingestion:read; then the repository's next audit reconciles them: a
 * runtime call corroborating a declared relationship raises its confidence, an undeclared one
 * opens an uncertainty case, and evidence older than EVIDENCE_STALE_AFTER_DAYS is listed in the
 * stale_evidence_ids of the assessments that use it.
 */
import crypto from 'node:crypto';
import test from 'ava';
import { runAudit, startAuditHarness, type AuditHarness } from './helpers/audit-harness';
import { createTenant, createToken, type Tenant } from './helpers/factories';
import { createRepo, type TestRepo } from './helpers/git';
import { call, isProblem } from './helpers/http';
import { CHANGES_V1 } from './fixtures/changes-repo';

const MAX_RECORDS = 5;
const MAX_BYTES = 4000;

let h: AuditHarness;
let tenant: Tenant;
let repo: TestRepo;
let repositoryId: string;

const ws = () => `/v1/workspaces/${tenant.workspaceId}`;
const get = (path: string, token = tenant.token) =>
  call(h.app.url, 'GET', `${ws()}${path}`, { token });
const ingest = (body: unknown, token = tenant.token, repository = repositoryId) =>
  call(h.app.url, 'POST', `${ws()}/repositories/${repository}/evidence`, { token, body });

const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString();
const call_ = (
  from: string,
  to: string,
  observedAt: string,
  extra: Record<string, unknown> = {},
) => ({
  kind: 'runtime_call',
  provider: 'opentelemetry',
  source_type: 'cloud',
  subject_key: from,
  object_key: to,
  observed_at: observedAt,
  ...extra,
});

async function audit(): Promise<string> {
  const done = await runAudit(h.app.url, tenant.token, tenant.workspaceId, {
    repository_id: repositoryId,
  });
  if (done.status !== 'completed') throw new Error(`audit ${done.id} ${done.status}`);
  return done.id;
}

test.before(async () => {
  h = await startAuditHarness({
    config: { ingestionMaxRecords: MAX_RECORDS, ingestionMaxBytes: MAX_BYTES },
  });
  tenant = await createTenant(h.app.services.db, { login: 'alice' });
  repo = createRepo(CHANGES_V1);
  const created = await call(h.app.url, 'POST', `${ws()}/repositories`, {
    token: tenant.token,
    body: { name: 'orders-system', url: `file://${repo.dir}` },
  });
  repositoryId = created.body.id;
});

test.after.always(async () => {
  await h?.close();
  repo?.remove();
});

test('every invalid record is reported with its index, and nothing is stored', async (t) => {
  const now = new Date().toISOString();
  const invalid = [
    call_('service:orders', 'datastore:orders-db', now),
    { ...call_('service:a', 'service:b', now), kind: 'log_line' },
    { ...call_('orders', 'service:b', now) },
    {
      kind: 'cicd_run',
      provider: 'github-actions',
      source_type: 'cloud',
      subject_key: 'pipeline:ci',
      observed_at: now,
    },
    {
      kind: 'runtime_call',
      provider: 'otel',
      source_type: 'cloud',
      subject_key: 'service:a',
      observed_at: new Date(Date.now() + 3_600_000).toISOString(),
    },
  ];
  // Six records over a limit of five: the size is refused before the records are read.
  const r = await ingest({
    batch_key: 'invalid-1',
    records: [...invalid, call_('service:a', 'service:b', now)],
  });
  t.is(r.status, 413);
  const bad = await ingest({ batch_key: 'invalid-2', records: invalid });
  t.is(bad.status, 422, bad.text);
  t.true(isProblem(bad));
  t.is(bad.body.code, 'invalid_evidence_records');
  t.deepEqual(bad.body.invalid_record_indexes, [1, 2, 3, 4]);
  t.deepEqual(
    bad.body.invalid_records.map((p: { index: number; code: string }) => `${p.index}:${p.code}`),
    [
      '1:unknown_kind',
      '2:invalid_key',
      '3:source_type_mismatch',
      '4:object_key_required',
      '4:observed_in_future',
    ],
  );
  t.deepEqual(
    bad.body.errors.map((e: { path: string }) => e.path),
    [
      '/records/1/kind',
      '/records/2/subject_key',
      '/records/3/source_type',
      '/records/4/object_key',
      '/records/4/observed_at',
    ],
  );
  const other = await ingest({
    batch_key: 'invalid-3',
    records: [
      {
        kind: 'cloud_resource',
        provider: 'aws-config',
        source_type: 'cloud',
        subject_key: 'datastore:x',
        object_key: 'service:y',
        observed_at: now,
      },
    ],
  });
  t.is(other.status, 422);
  t.is(other.body.invalid_records[0].code, 'object_key_not_allowed');
  // Structure is checked by the schema: a missing field or an unknown one is 400 with its path.
  const shape = await ingest({
    batch_key: 'invalid-4',
    records: [
      call_('service:a', 'service:b', now),
      { ...call_('service:a', 'service:b', now), provider: undefined, extra: 1 },
    ],
  });
  t.is(shape.status, 400);
  t.true(shape.body.errors.some((e: { path: string }) => e.path.startsWith('/records/1')));
  const empty = await ingest({ batch_key: 'invalid-5', records: [] });
  t.is(empty.status, 400);
  const list = await get(`/ingestions?repository_id=${repositoryId}&limit=200`);
  t.false(list.body.items.some((i: { batch_key: string }) => i.batch_key.startsWith('invalid-')));
});

test('limits: records and bytes at the bound are accepted, one past is 413', async (t) => {
  const now = new Date().toISOString();
  const five = Array.from({ length: MAX_RECORDS }, (_, i) =>
    call_(`service:s${i}`, 'service:t', now),
  );
  const atBound = await ingest({
    batch_key: `limit-records-${crypto.randomUUID()}`,
    records: five,
  });
  t.is(atBound.status, 202, atBound.text);
  const six = await ingest({
    batch_key: 'limit-records-over',
    records: [...five, call_('service:s9', 'service:t', now)],
  });
  t.is(six.status, 413);
  t.is(six.body.code, 'batch_too_large');
  t.is(six.body.max_records, MAX_RECORDS);

  // A batch padded (an attribute) to exactly MAX_BYTES of JSON, and one byte more.
  const sized = (bytes: number, batchKey: string) => {
    const attributes = { pad: '' };
    const body = {
      batch_key: batchKey,
      records: [{ ...call_('service:a', 'service:b', now), attributes }],
    };
    attributes.pad = 'x'.repeat(bytes - Buffer.byteLength(JSON.stringify(body)));
    return body;
  };
  const exact = sized(MAX_BYTES, 'limit-bytes');
  t.is(Buffer.byteLength(JSON.stringify(exact)), MAX_BYTES);
  t.is((await ingest(exact)).status, 202);
  const over = sized(MAX_BYTES + 1, 'limit-bytes-over');
  t.is(Buffer.byteLength(JSON.stringify(over)), MAX_BYTES + 1);
  const refused = await ingest(over);
  t.is(refused.status, 413);
  t.is(refused.body.code, 'batch_too_large');
});

test('idempotent per batch key; listed and read with ingestion:read; recorded', async (t) => {
  const now = new Date().toISOString();
  const batch = { batch_key: 'idem-1', records: [call_('service:x', 'service:y', now)] };
  const first = await ingest(batch);
  t.is(first.status, 202);
  t.is(first.headers.get('location'), `${ws()}/ingestions/${first.body.id}`);
  t.like(first.body, { repository_id: repositoryId, record_count: 1, batch_key: 'idem-1' });
  t.deepEqual(first.body.counts, { runtime_call: 1, cloud_resource: 0, cicd_run: 0 });
  const again = await ingest(batch);
  t.is(again.status, 202);
  t.deepEqual(again.body, first.body);
  const changed = await ingest({ ...batch, records: [call_('service:x', 'service:z', now)] });
  t.is(changed.status, 409);
  t.is(changed.body.code, 'batch_key_conflict');
  t.is(changed.body.ingestion_id, first.body.id);

  const reader = await createToken(h.app.services.db, tenant, ['ingestion:read']);
  const one = await get(`/ingestions/${first.body.id}`, reader.token);
  t.deepEqual(one.body, first.body);
  const list = await get(`/ingestions?repository_id=${repositoryId}`, reader.token);
  t.true(list.body.items.some((i: { id: string }) => i.id === first.body.id));
  const writeRefused = await ingest(batch, reader.token);
  t.is(writeRefused.status, 403);
  t.deepEqual(writeRefused.body.required_scopes, ['evidence:write']);
  t.is((await get(`/ingestions/00000000-0000-4000-8000-000000000000`)).status, 404);
  const unknownRepo = await ingest(batch, tenant.token, '00000000-0000-4000-8000-000000000000');
  t.is(unknownRepo.status, 404);
  // Another workspace sees none of it.
  const other = await createTenant(h.app.services.db);
  const foreign = await call(
    h.app.url,
    'GET',
    `/v1/workspaces/${other.workspaceId}/ingestions/${first.body.id}`,
    {
      token: other.token,
    },
  );
  t.is(foreign.status, 404);

  const events = await get(`/audit-events?limit=200`);
  const recorded = events.body.items.filter(
    (e: { action: string; resource_id: string }) =>
      e.action === 'evidence.ingested' && e.resource_id === first.body.id,
  );
  t.is(recorded.length, 1, 'the repeat stored nothing and recorded nothing');
});

test.serial('the next audit: corroborated, contradicted and stale evidence', async (t) => {
  const baseline = await audit();
  const before = await get(`/audits/${baseline}/architecture`);
  const rel = (body: { relationships: Array<Record<string, any>> }, key: string) =>
    body.relationships.find((r) => r.canonical_key === key)!;
  const ORDERS_DB = 'connects_to:service:orders->datastore:orders-db';
  const LEGACY_DB = 'connects_to:service:billing->datastore:legacy-db';
  t.truthy(rel(before.body, ORDERS_DB));

  const batch = await ingest({
    batch_key: 'traces-2026-11',
    records: [
      call_('service:orders', 'datastore:orders-db', daysAgo(1), {
        location: { path: 'https://traces.example/t/1' },
      }),
      call_('service:billing', 'service:orders', daysAgo(1)),
      call_('service:billing', 'datastore:legacy-db', daysAgo(40)),
      {
        kind: 'cloud_resource',
        provider: 'aws-config',
        source_type: 'cloud',
        subject_key: 'datastore:orders-db',
        observed_at: daysAgo(2),
      },
      {
        kind: 'cicd_run',
        provider: 'github-actions',
        source_type: 'cicd',
        subject_key: 'pipeline:github-actions/ci',
        observed_at: daysAgo(1),
      },
    ],
  });
  t.is(batch.status, 202, batch.text);

  const next = await audit();
  const after = await get(`/audits/${next}/architecture`);
  const evidence = after.body.evidence as Array<Record<string, any>>;
  const ingested = evidence.filter((e) => String(e.source_ref).startsWith('ingestion:'));
  t.is(ingested.length >= 5, true, 'every record of the window is evidence of the snapshot');
  t.true(
    ingested.every(
      (e) => e.source_ref === `ingestion:${batch.body.id}` || e.source_ref.startsWith('ingestion:'),
    ),
  );

  // Corroborated: the runtime call joins the declared relationship and raises its confidence.
  const corroborated = rel(after.body, ORDERS_DB);
  const runtime = evidence.find(
    (e) =>
      e.evidence_kind === 'runtime-call' &&
      e.subject_key === 'service:orders' &&
      e.object_key === 'datastore:orders-db',
  )!;
  t.truthy(runtime);
  t.is(runtime.source_type, 'cloud');
  t.deepEqual(runtime.location, { path: 'https://traces.example/t/1' });
  t.true(corroborated.evidence_ids.includes(runtime.id));
  t.true(corroborated.sources.includes('cloud'));
  t.true(Number(corroborated.confidence) > Number(rel(before.body, ORDERS_DB).confidence));
  const ordersDb = after.body.entities.find(
    (e: { canonical_key: string }) => e.canonical_key === 'datastore:orders-db',
  );
  t.true(
    ordersDb.evidence_ids.some(
      (id: string) => evidence.find((e) => e.id === id)?.evidence_kind === 'resource-observed',
    ),
  );
  // Coverage is what the files gave: ingested evidence adds no source type.
  t.deepEqual(after.body.sources, before.body.sources);
  t.is(after.body.relationship_count, before.body.relationship_count, 'no relationship invented');

  // Contradicted: a call nothing declares is an uncertainty case, not a relationship.
  t.falsy(rel(after.body, 'calls:service:billing->service:orders'));
  const cases = await get(`/uncertainty-cases?repository_id=${repositoryId}&limit=200`);
  const undeclared = cases.body.items.find(
    (c: { subject_key: string }) => c.subject_key === 'calls:service:billing->service:orders',
  );
  t.truthy(
    undeclared,
    JSON.stringify(cases.body.items.map((c: { subject_key: string }) => c.subject_key)),
  );
  t.like(undeclared, {
    reason: 'conflicting_evidence',
    scope: 'relationship',
    state: 'open',
    blocking: false,
  });
  const billingCall = evidence.find(
    (e) =>
      e.evidence_kind === 'runtime-call' &&
      e.subject_key === 'service:billing' &&
      e.object_key === 'service:orders',
  )!;
  t.deepEqual(undeclared.evidence_ids, [billingCall.id]);
  t.regex(undeclared.detail, /opentelemetry/);

  // Stale: the 40-day-old observation is listed by the assessments resting on its relationship.
  const old = evidence.find(
    (e) => e.evidence_kind === 'runtime-call' && e.object_key === 'datastore:legacy-db',
  )!;
  t.true(rel(after.body, LEGACY_DB).evidence_ids.includes(old.id));
  t.is(
    Date.parse(old.observed_at) < Date.now() - 39 * 86_400_000,
    true,
    'keeps its observation time',
  );
  const assessments = await get(`/audits/${next}/assessments?limit=200`);
  const stale = assessments.body.items.filter(
    (a: { stale_evidence_ids: string[] }) => a.stale_evidence_ids.length > 0,
  );
  t.true(stale.length > 0, 'some assessment uses the old evidence');
  for (const a of stale) t.deepEqual(a.stale_evidence_ids, [old.id], a.control_key);
  t.true(
    assessments.body.items.every(
      (a: { stale_evidence_ids: string[] }) => !a.stale_evidence_ids.includes(runtime.id),
    ),
    'recent evidence is not stale',
  );
});
