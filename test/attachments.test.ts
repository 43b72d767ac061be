/**
 * Audit attachments through the real HTTP API (create from an upload, list, download, delete,
 * every bound, tenancy) and the retention sweep: the RetentionWorkflow started by its Temporal
 * Schedule on the real Temporal dev server, removing expired attachments (row and blob) while
 * unexpired ones and blobs still held elsewhere stay.
 */
import test, { type ExecutionContext } from 'ava';
import crypto from 'node:crypto';
import { BlobStore } from '../platform/blob-store';
import { ensureRetentionSchedule } from '../platform/retention-schedule';
import type { RetentionWorkflow } from '../workflows/retention';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, createToken, type Tenant } from './helpers/factories';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { call, isProblem, type Reply } from './helpers/http';
import { sha256, tarGz } from './helpers/archives';

let h: AuditHarness;
let tenant: Tenant;
let other: Tenant;
let repo: TestRepo;
let auditId: string;
let otherAuditId: string;
let blobs: BlobStore;

const DAY_MS = 24 * 60 * 60 * 1000;
const ZERO_UUID = '00000000-0000-4000-8000-000000000000';

test.before(async () => {
  h = await startAuditHarness();
  blobs = new BlobStore(h.app.services.config.blobDir);
  tenant = await createTenant(h.app.services.db);
  other = await createTenant(h.app.services.db);
  repo = createRepo(SAMPLE_FILES);
  auditId = await auditOf(tenant);
  otherAuditId = await auditOf(other);
});

test.after.always(async () => {
  await h?.close();
  repo?.remove();
});

const ws = (who: Tenant = tenant) => `/v1/workspaces/${who.workspaceId}`;
const attachmentsOf = (audit = auditId, who: Tenant = tenant) =>
  `${ws(who)}/audits/${audit}/attachments`;
const contentPath = (id: string, who: Tenant = tenant) => `${ws(who)}/attachments/${id}/content`;
const attachmentPath = (id: string, who: Tenant = tenant) => `${ws(who)}/attachments/${id}`;

async function auditOf(who: Tenant): Promise<string> {
  const created = await call(h.app.url, 'POST', `${ws(who)}/repositories`, {
    token: who.token,
    body: { name: `shop-${crypto.randomBytes(4).toString('hex')}`, url: `file://${repo.dir}` },
  });
  const started = await call(h.app.url, 'POST', `${ws(who)}/audits`, {
    token: who.token,
    body: { repository_id: created.body.id },
  });
  if (started.status !== 202) throw new Error(`createAudit: ${started.status} ${started.text}`);
  const done = await waitForAudit(h.app.url, who.token, who.workspaceId, started.body.id);
  return done.body.id;
}

/** A tar.gz unique to the caller (so its blob is its own unless the test shares it). */
function evidenceArchive(label: string): Promise<Buffer> {
  return tarGz([
    { name: './', type: 'directory' },
    { name: './evidence.txt', data: `${label} ${crypto.randomUUID()}\n` },
  ]);
}

async function upload(bytes: Buffer, filename: string, who: Tenant = tenant): Promise<any> {
  const reply = await call(
    h.app.url,
    'POST',
    `${ws(who)}/uploads?filename=${encodeURIComponent(filename)}`,
    { token: who.token, raw: bytes, headers: { 'Content-Type': 'application/gzip' } },
  );
  if (reply.status !== 201) throw new Error(`createUpload: ${reply.status} ${reply.text}`);
  return reply.body;
}

function attach(body: Record<string, unknown>, audit = auditId, who: Tenant = tenant) {
  return call(h.app.url, 'POST', attachmentsOf(audit, who), { token: who.token, body });
}

async function attached(uploadId: string, retentionDays?: number): Promise<any> {
  const reply = await attach({
    upload_id: uploadId,
    ...(retentionDays ? { retention_days: retentionDays } : {}),
  });
  if (reply.status !== 201) throw new Error(`attach: ${reply.status} ${reply.text}`);
  return reply.body;
}

async function download(id: string, token = tenant.token, who: Tenant = tenant) {
  const res = await fetch(`${h.app.url}${contentPath(id, who)}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { res, bytes };
}

const get = (path: string, who: Tenant = tenant) =>
  call(h.app.url, 'GET', path, { token: who.token });
const del = (path: string, who: Tenant = tenant) =>
  call(h.app.url, 'DELETE', path, { token: who.token });

async function statusOf(id: string): Promise<string> {
  const list = await get(`${attachmentsOf()}?limit=200`);
  return list.body.items.find((a: any) => a.id === id)?.status;
}

function assertRejects(t: ExecutionContext, reply: Reply, path: string) {
  t.is(reply.status, 400, reply.text);
  t.true(isProblem(reply));
  t.true(
    (reply.body.errors as Array<{ path: string }>).some((e) => e.path === path),
    `errors name ${path}: ${reply.text}`,
  );
}

/** Moves an attachment's retention into the past (days cannot pass in a test). */
async function backdate(id: string): Promise<void> {
  await h.app.services
    .db('audit_attachments')
    .where({ id })
    .update({ retained_until: new Date(Date.now() - 60_000) });
}

// Create, list, download ----------------------------------------------------------------------

test('an attachment made from an upload lists and downloads the exact uploaded bytes', async (t) => {
  const bytes = await evidenceArchive('pentest report');
  const up = await upload(bytes, 'pentest-2026 (final).tar.gz');
  const created = await attach({ upload_id: up.id });
  t.is(created.status, 201, created.text);
  const a = created.body;
  t.like(a, {
    upload_id: up.id,
    uploaded_by: tenant.memberId,
    filename: 'pentest-2026 (final).tar.gz',
    content_type: 'application/gzip',
    sha256: sha256(bytes),
    size_bytes: bytes.length,
    status: 'available',
    audit_id: auditId,
    retention_days: 90,
    removed_at: null,
  });
  t.is(Date.parse(a.retained_until) - Date.parse(a.created_at), 90 * DAY_MS, 'default 90 days');
  t.is(created.headers.get('location'), contentPath(a.id));

  const list = await get(attachmentsOf());
  t.is(list.status, 200);
  t.deepEqual(
    list.body.items.find((x: any) => x.id === a.id),
    a,
  );

  const { res, bytes: got } = await download(a.id);
  t.is(res.status, 200);
  t.is(sha256(got), sha256(bytes), 'downloaded bytes are the uploaded bytes');
  t.is(got.length, bytes.length);
  t.is(res.headers.get('content-type'), 'application/gzip');
  t.is(res.headers.get('content-length'), String(bytes.length));
  t.is(
    res.headers.get('content-disposition'),
    `attachment; filename="pentest-2026 (final).tar.gz"; filename*=UTF-8''${encodeURIComponent('pentest-2026 (final).tar.gz')}`,
  );
  t.is(res.headers.get('x-content-sha256'), sha256(bytes));
  t.truthy(res.headers.get('x-request-id'));

  const reader = await createToken(h.app.services.db, tenant, ['audits:read']);
  t.is((await download(a.id, reader.token)).res.status, 200, 'audits:read may download');
  const denied = await call(h.app.url, 'POST', attachmentsOf(), {
    token: reader.token,
    body: { upload_id: up.id },
  });
  t.is(denied.status, 403);
  t.is(denied.body.code, 'insufficient_scope');

  const events = await get(`${ws()}/audit-events?limit=200`);
  const ev = events.body.items.find((e: any) => e.resource_id === a.id);
  t.like(ev, { action: 'attachment.created', actor_id: tenant.memberId });
  const feed = await get(`${ws()}/activity?limit=200`);
  t.truthy(feed.body.items.find((e: any) => e.resource_id === a.id));
});

test('retention_days at each bound and one past it; the upload_id must be one of ours', async (t) => {
  const up = await upload(await evidenceArchive('bounds'), 'bounds.tar.gz');
  for (const days of [1, 365]) {
    const r = await attach({ upload_id: up.id, retention_days: days });
    t.is(r.status, 201, r.text);
    t.is(Date.parse(r.body.retained_until) - Date.parse(r.body.created_at), days * DAY_MS);
  }
  for (const days of [0, 366, -1, 1.5, '30', null]) {
    assertRejects(t, await attach({ upload_id: up.id, retention_days: days }), '/retention_days');
  }
  assertRejects(t, await attach({}), '/upload_id');
  assertRejects(t, await attach({ upload_id: 'not-a-uuid' }), '/upload_id');
  assertRejects(t, await attach({ upload_id: ZERO_UUID }), '/upload_id');
  const theirs = await upload(await evidenceArchive('theirs'), 'theirs.tar.gz', other);
  assertRejects(t, await attach({ upload_id: theirs.id }), '/upload_id');
  // The spec leaves AttachmentCreate open to unknown properties.
  const extra = await attach({ upload_id: up.id, note: 'kept for the auditor' });
  t.is(extra.status, 201, extra.text);
  const page = await get(`${attachmentsOf()}?limit=201`);
  assertRejects(t, page, '/limit');
  assertRejects(t, await get(`${attachmentsOf()}?status=gone`), '/status');
});

test("another workspace's audits and attachments are 404", async (t) => {
  const up = await upload(await evidenceArchive('tenancy'), 'tenancy.tar.gz');
  const a = await attached(up.id);
  t.is((await attach({ upload_id: up.id }, otherAuditId)).status, 404);
  t.is((await get(attachmentsOf(otherAuditId))).status, 404);
  t.is((await get(attachmentsOf(auditId, other), other)).status, 404);
  t.is((await download(a.id, other.token, other)).res.status, 404);
  t.is((await del(attachmentPath(a.id, other), other)).status, 404);
  t.is((await get(attachmentsOf(ZERO_UUID))).status, 404);
  t.is((await download(ZERO_UUID)).res.status, 404);
  t.is(await statusOf(a.id), 'available', 'untouched');
});

test('the list pages newest first and filters by status', async (t) => {
  const audit = await auditOf(tenant);
  const up = await upload(await evidenceArchive('paging'), 'paging.tar.gz');
  const made: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await attach({ upload_id: up.id }, audit);
    made.push(r.body.id);
  }
  const first = await get(`${attachmentsOf(audit)}?limit=2`);
  t.true(first.body.has_more);
  const second = await get(
    `${attachmentsOf(audit)}?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`,
  );
  t.false(second.body.has_more);
  t.deepEqual(
    [...first.body.items, ...second.body.items].map((a: any) => a.id),
    [...made].reverse(),
  );
  await del(attachmentPath(made[0]!));
  const available = await get(`${attachmentsOf(audit)}?status=available`);
  t.deepEqual(
    available.body.items.map((a: any) => a.id),
    [made[2], made[1]],
  );
  const deleted = await get(`${attachmentsOf(audit)}?status=deleted`);
  t.deepEqual(
    deleted.body.items.map((a: any) => a.id),
    [made[0]],
  );
});

// Delete and blob release ---------------------------------------------------------------------

test('delete removes the content once no other attachment holds the same bytes', async (t) => {
  const bytes = await evidenceArchive('delete');
  const up = await upload(bytes, 'delete.tar.gz');
  const first = await attached(up.id);
  const second = await attached(up.id);

  const gone = await del(attachmentPath(first.id));
  t.is(gone.status, 200, gone.text);
  t.like(gone.body, { id: first.id, status: 'deleted' });
  t.truthy(gone.body.removed_at);
  const content = await get(contentPath(first.id));
  t.is(content.status, 410);
  t.true(isProblem(content));
  t.is(content.body.code, 'attachment_removed');
  t.is(content.body.attachment_status, 'deleted');
  const twice = await del(attachmentPath(first.id));
  t.is(twice.status, 410);
  t.is(twice.body.code, 'attachment_removed');
  t.true(blobs.has(up.sha256), 'the second attachment still holds the blob');
  t.is(sha256((await download(second.id)).bytes), sha256(bytes));

  t.is((await del(attachmentPath(second.id))).status, 200);
  t.false(blobs.has(up.sha256), 'the last holder is gone, so are the bytes');
  const upNow = await get(`${ws()}/uploads/${up.id}`);
  t.is(upNow.body.status, 'expired');
  const reattach = await attach({ upload_id: up.id });
  t.is(reattach.status, 409);
  t.is(reattach.body.code, 'upload_expired');
  const audit = await call(h.app.url, 'POST', `${ws()}/audits`, {
    token: tenant.token,
    body: { upload_id: up.id },
  });
  assertRejects(t, audit, '/upload_id');

  // The same bytes uploaded again are stored again and attach normally.
  const again = await upload(bytes, 'delete.tar.gz');
  t.is(again.sha256, up.sha256);
  t.is(again.status, 'ready');
  t.true(blobs.has(up.sha256));
  const fresh = await attached(again.id);
  t.is(sha256((await download(fresh.id)).bytes), sha256(bytes));

  const events = await get(`${ws()}/audit-events?limit=200`);
  t.truthy(
    events.body.items.find(
      (e: any) => e.resource_id === first.id && e.action === 'attachment.deleted',
    ),
  );
});

test('an upload an audit ran on keeps its bytes when its attachment is deleted', async (t) => {
  const bytes = await tarGz([
    { name: './', type: 'directory' },
    { name: './Dockerfile', data: `FROM node:20\n# ${crypto.randomUUID()}\n` },
  ]);
  const up = await upload(bytes, 'source.tar.gz');
  const started = await call(h.app.url, 'POST', `${ws()}/audits`, {
    token: tenant.token,
    body: { upload_id: up.id },
  });
  t.is(started.status, 202, started.text);
  await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, started.body.id);
  const a = await attached(up.id);
  t.is((await del(attachmentPath(a.id))).status, 200);
  t.true(blobs.has(up.sha256), 'a retry of the audit reads it again');
  t.is((await get(`${ws()}/uploads/${up.id}`)).body.status, 'ready');
});

test('an upload never attached holds the bytes it shares with a deleted attachment', async (t) => {
  const bytes = await evidenceArchive('twin');
  const attachedUpload = await upload(bytes, 'twin-a.tar.gz');
  const waiting = await upload(bytes, 'twin-b.tar.gz');
  const a = await attached(attachedUpload.id);
  const reader = await createToken(h.app.services.db, tenant, ['audits:read']);
  const denied = await call(h.app.url, 'DELETE', attachmentPath(a.id), { token: reader.token });
  t.is(denied.status, 403, 'deleting needs uploads:write');
  t.is((await del(attachmentPath(a.id))).status, 200);
  t.true(blobs.has(waiting.sha256), 'the waiting upload still needs the bytes');
  t.is((await get(`${ws()}/uploads/${waiting.id}`)).body.status, 'ready');
  const later = await attached(waiting.id);
  t.is(sha256((await download(later.id)).bytes), sha256(bytes));
});

// Retention -----------------------------------------------------------------------------------

test.serial('the retention schedule removes expired attachments and keeps the rest', async (t) => {
  const expiredBytes = await evidenceArchive('expired');
  const keptBytes = await evidenceArchive('kept');
  const sharedBytes = await evidenceArchive('shared');
  const expiredUpload = await upload(expiredBytes, 'expired.tar.gz');
  const keptUpload = await upload(keptBytes, 'kept.tar.gz');
  const sharedA = await upload(sharedBytes, 'shared-a.tar.gz');
  const sharedB = await upload(sharedBytes, 'shared-b.tar.gz');
  const expired = await attached(expiredUpload.id, 1);
  const kept = await attached(keptUpload.id, 1);
  const sharedExpired = await attached(sharedA.id, 1);
  const sharedLive = await attached(sharedB.id, 30);
  await backdate(expired.id);
  await backdate(sharedExpired.id);

  const client = await h.app.services.temporal.client();
  const scheduleId = `retention-sweep-test-${crypto.randomBytes(4).toString('hex')}`;
  const options = { taskQueue: h.app.services.config.taskQueue, intervalMinutes: 60, scheduleId };
  const handle = await ensureRetentionSchedule(client, options);
  try {
    // Boot runs it every time: a second call updates the schedule instead of failing.
    await ensureRetentionSchedule(client, { ...options, intervalMinutes: 30 });
    const described = await handle.describe();
    t.is(described.spec.intervals?.[0]?.every, 30 * 60 * 1000);
    t.is(described.action.workflowType, 'RetentionWorkflow');

    await handle.trigger();
    const deadline = Date.now() + 60_000;
    while (
      (await statusOf(expired.id)) !== 'expired' ||
      (await statusOf(sharedExpired.id)) !== 'expired'
    ) {
      if (Date.now() > deadline)
        throw new Error('the sweep did not remove the expired attachments');
      await new Promise((r) => setTimeout(r, 250));
    }
    const runs = (await handle.describe()).info.recentActions;
    t.true(runs.length >= 1, 'the schedule started a workflow');
    const run = client.workflow.getHandle<typeof RetentionWorkflow>(
      runs[0]!.action.workflow.workflowId,
    );
    t.like(await run.result(), { removed: 2, blobsRemoved: 1 });
  } finally {
    await handle.delete();
  }

  // Expired: row state, its content, its blob and its upload.
  const list = await get(`${attachmentsOf()}?limit=200`);
  const row = list.body.items.find((a: any) => a.id === expired.id);
  t.is(row.status, 'expired');
  t.truthy(row.removed_at);
  const content = await get(contentPath(expired.id));
  t.is(content.status, 410);
  t.is(content.body.code, 'attachment_removed');
  t.false(blobs.has(expiredUpload.sha256), 'the expired blob is removed');
  t.is((await get(`${ws()}/uploads/${expiredUpload.id}`)).body.status, 'expired');

  // Not yet due: untouched.
  t.is(await statusOf(kept.id), 'available');
  t.is(sha256((await download(kept.id)).bytes), sha256(keptBytes));

  // Expired, but the same bytes are still held by a live attachment: the blob stays.
  t.is(await statusOf(sharedExpired.id), 'expired');
  t.true(blobs.has(sharedA.sha256));
  t.is(sha256((await download(sharedLive.id)).bytes), sha256(sharedBytes));
  t.is((await get(`${ws()}/uploads/${sharedB.id}`)).body.status, 'ready');

  const events = await get(`${ws()}/audit-events?limit=200`);
  const ev = events.body.items.find(
    (e: any) => e.resource_id === expired.id && e.action === 'attachment.expired',
  );
  t.truthy(ev, 'the removal is an audit event');
  t.is(ev.actor_id, null);
  t.like(ev.details, { audit_id: auditId, sha256: expiredUpload.sha256 });
  const feed = await get(`${ws()}/activity?limit=200`);
  const item = feed.body.items.find(
    (e: any) => e.resource_id === expired.id && e.action === 'attachment.expired',
  );
  t.is(item?.actor_login, 'system:retention');
});

test.serial('one sweep works through every due attachment in batches', async (t) => {
  const made = [];
  for (let i = 0; i < 5; i++) {
    const up = await upload(await evidenceArchive(`batch ${i}`), `batch-${i}.tar.gz`);
    made.push({ up, a: await attached(up.id, 1) });
  }
  for (const { a } of made.slice(0, 4)) await backdate(a.id);
  const client = await h.app.services.temporal.client();
  const result = await client.workflow.execute<typeof RetentionWorkflow>('RetentionWorkflow', {
    workflowId: `retention-test-${crypto.randomUUID()}`,
    taskQueue: h.app.services.config.taskQueue,
    args: [{ batchSize: 2 }],
  });
  t.like(result, { removed: 4, blobsRemoved: 4 });
  for (const { up, a } of made.slice(0, 4)) {
    t.is(await statusOf(a.id), 'expired');
    t.false(blobs.has(up.sha256));
  }
  t.is(await statusOf(made[4]!.a.id), 'available');
  t.true(blobs.has(made[4]!.up.sha256));
});
