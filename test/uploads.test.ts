/**
 * Source archive uploads through the real HTTP API: createUpload / getUpload, audits of an
 * upload run by a real worker, and every refusal at upload time (unsafe entries, limits,
 * corrupt or non-archive bodies, media type, body size), which must leave no upload behind.
 */
import test, { type ExecutionContext } from 'ava';
import fs from 'node:fs';
import crypto from 'node:crypto';
import { BlobStore } from '../platform/blob-store';
import { DEFAULT_ARCHIVE_LIMITS, RATIO_GRACE_BYTES } from '../platform/archive';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, createToken, type Tenant } from './helpers/factories';
import { call, isProblem, type Reply } from './helpers/http';
import {
  manyFilesTarGz,
  MiB,
  patch,
  sha256,
  tarGz,
  zerosTarGz,
  zipBytes,
  type TarItem,
} from './helpers/archives';
import { SCOPES } from '../domain/contract/values';

let h: AuditHarness;

test.before(async () => {
  h = await startAuditHarness();
});

test.after.always(async () => {
  await h?.close();
});

const STAGES = [
  'source',
  'inventory',
  'code',
  'cloud',
  'cicd',
  'reconcile',
  'controls',
  'changes',
  'report',
];

/** A small source tree touching all three source types, plus one file of none. */
const SOURCE: Record<string, string> = {
  'README.md': '# uploaded shop\n',
  Dockerfile: 'FROM node:20\nCOPY . .\nCMD ["node", "dist/index.js"]\n',
  '.github/workflows/ci.yml':
    'on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n',
  'package.json': JSON.stringify({ name: 'shop', dependencies: { pg: '^8' } }, null, 2),
  'src/index.ts':
    "import { Pool } from 'pg';\nexport const pool = new Pool({ connectionString: process.env.DATABASE_URL });\n",
};
const SOURCE_BYTES = Object.values(SOURCE).reduce((n, s) => n + Buffer.byteLength(s), 0);

const sourceTar = (extra: TarItem[] = []): Promise<Buffer> =>
  tarGz([
    { name: './', type: 'directory' },
    ...Object.entries(SOURCE).map(([name, data]) => ({ name: `./${name}`, data })),
    ...extra,
  ]);

const sourceZip = (): Promise<Buffer> =>
  zipBytes([
    { name: 'src/', dir: true },
    ...Object.entries(SOURCE).map(([name, data]) => ({ name, data })),
  ]);

const uploadsPath = (ws: string) => `/v1/workspaces/${ws}/uploads`;
const auditsPath = (ws: string) => `/v1/workspaces/${ws}/audits`;

function upload(
  tenant: Tenant,
  bytes: Buffer,
  contentType = 'application/gzip',
  options: { filename?: string; base?: string; token?: string } = {},
): Promise<Reply> {
  const query = options.filename ? `?filename=${encodeURIComponent(options.filename)}` : '';
  return call(options.base ?? h.app.url, 'POST', `${uploadsPath(tenant.workspaceId)}${query}`, {
    token: options.token ?? tenant.token,
    raw: bytes,
    headers: { 'Content-Type': contentType },
  });
}

async function uploaded(tenant: Tenant, bytes: Buffer, contentType?: string): Promise<Reply> {
  const reply = await upload(tenant, bytes, contentType);
  if (reply.status !== 201) throw new Error(`createUpload: ${reply.status} ${reply.text}`);
  return reply;
}

async function runAudit(tenant: Tenant, body: Record<string, unknown>): Promise<Reply> {
  const started = await call(h.app.url, 'POST', auditsPath(tenant.workspaceId), {
    token: tenant.token,
    body,
  });
  if (started.status !== 202) throw new Error(`createAudit: ${started.status} ${started.text}`);
  return waitForAudit(h.app.url, tenant.token, tenant.workspaceId, started.body.id);
}

async function uploadRows(db: AuditHarness['app']['services']['db'], tenant: Tenant) {
  const [row] = await db('uploads').where({ workspace_id: tenant.workspaceId }).count('* as n');
  return Number(row!.n);
}

const blobPath = (harness: AuditHarness, sha: string) =>
  new BlobStore(harness.app.services.config.blobDir).pathOf(sha);

/** A refusal: status, problem+json with the exact code, no upload row, no blob kept. */
async function refused(
  t: ExecutionContext,
  bytes: Buffer,
  status: number,
  code: string,
  contentType = 'application/gzip',
  harness: AuditHarness = h,
): Promise<Reply> {
  const tenant = await createTenant(harness.app.services.db);
  const reply = await upload(tenant, bytes, contentType, { base: harness.app.url });
  t.is(reply.status, status, reply.text);
  t.true(isProblem(reply), reply.text);
  t.is(reply.body?.code, code, reply.text);
  t.is(await uploadRows(harness.app.services.db, tenant), 0, 'no upload row was created');
  t.false(fs.existsSync(blobPath(harness, sha256(bytes))), 'the refused bytes are not kept');
  return reply;
}

// ---------------------------------------------------------------------------------------------
// createUpload / getUpload

for (const [format, contentType, build, filename] of [
  ['tar.gz', 'application/gzip', () => sourceTar(), 'shop-1.2.tar.gz'],
  ['zip', 'application/zip', () => sourceZip(), 'shop.zip'],
] as const) {
  test(`createUpload stores a good ${format} and getUpload returns it`, async (t) => {
    const tenant = await createTenant(h.app.services.db);
    const bytes = await build();
    const reply = await upload(tenant, bytes, contentType, { filename });
    t.is(reply.status, 201, reply.text);
    const body = reply.body;
    t.is(reply.headers.get('location'), `${uploadsPath(tenant.workspaceId)}/${body.id}`);
    t.like(body, {
      workspace_id: tenant.workspaceId,
      uploaded_by: tenant.memberId,
      filename,
      content_type: contentType,
      format,
      sha256: sha256(bytes),
      size_bytes: bytes.length,
      file_count: Object.keys(SOURCE).length,
      unpacked_bytes: SOURCE_BYTES,
      status: 'ready',
    });
    t.regex(body.id, /^[0-9a-f-]{36}$/);
    t.false(Number.isNaN(Date.parse(body.created_at)));
    t.true(fs.existsSync(blobPath(h, body.sha256)), 'the archive is in the blob store');

    const got = await call(h.app.url, 'GET', `${uploadsPath(tenant.workspaceId)}/${body.id}`, {
      token: tenant.token,
    });
    t.is(got.status, 200, got.text);
    t.deepEqual(got.body, body);

    const other = await createTenant(h.app.services.db);
    const foreign = await call(h.app.url, 'GET', `${uploadsPath(other.workspaceId)}/${body.id}`, {
      token: other.token,
    });
    t.is(foreign.status, 404, foreign.text);
    t.true(isProblem(foreign));
    const crossPath = await call(
      h.app.url,
      'GET',
      `${uploadsPath(tenant.workspaceId)}/${body.id}`,
      { token: other.token },
    );
    t.is(crossPath.status, 404, "another workspace's token cannot name this workspace");
  });
}

test('the filename defaults by format; application/x-gzip and octet-stream are accepted', async (t) => {
  const tenant = await createTenant(h.app.services.db);
  const tgz = await upload(
    tenant,
    await sourceTar([{ name: 'x-gzip.txt', data: 'x' }]),
    'application/x-gzip',
  );
  t.is(tgz.status, 201, tgz.text);
  t.is(tgz.body.filename, 'upload.tar.gz');
  t.is(tgz.body.content_type, 'application/x-gzip');
  const zip = await upload(tenant, await sourceZip(), 'application/octet-stream');
  t.is(zip.status, 201, zip.text);
  t.is(zip.body.format, 'zip', 'the format comes from the bytes, not the Content-Type');
  t.is(zip.body.filename, 'upload.zip');
});

test('createUpload and getUpload need uploads:write (403)', async (t) => {
  const tenant = await createTenant(h.app.services.db);
  const weak = await createToken(
    h.app.services.db,
    tenant,
    SCOPES.filter((s) => s !== 'uploads:write'),
  );
  const bytes = await sourceTar([{ name: 'scope.txt', data: 'scope' }]);
  const reply = await upload(tenant, bytes, 'application/gzip', { token: weak.token });
  t.is(reply.status, 403, reply.text);
  t.true(isProblem(reply));
  t.is(reply.body.code, 'insufficient_scope');
  t.deepEqual(reply.body.required_scopes, ['uploads:write']);
  t.is(await uploadRows(h.app.services.db, tenant), 0);

  const made = await uploaded(tenant, bytes);
  const got = await call(h.app.url, 'GET', `${uploadsPath(tenant.workspaceId)}/${made.body.id}`, {
    token: weak.token,
  });
  t.is(got.status, 403, got.text);
});

test('getUpload of an unknown id is 404', async (t) => {
  const tenant = await createTenant(h.app.services.db);
  const reply = await call(
    h.app.url,
    'GET',
    `${uploadsPath(tenant.workspaceId)}/${crypto.randomUUID()}`,
    { token: tenant.token },
  );
  t.is(reply.status, 404, reply.text);
  t.true(isProblem(reply));
});

// ---------------------------------------------------------------------------------------------
// Audits of uploads

function checkUploadAudit(t: ExecutionContext, audit: any, uploadId: string, files: number) {
  t.is(audit.status, 'completed', JSON.stringify(audit.stages));
  t.is(audit.audit_type, 'upload');
  t.is(audit.upload_id, uploadId);
  t.is(audit.repository_id, null);
  t.is(audit.commit_sha, null);
  t.is(audit.branch_ref, null);
  t.like(audit.source, {
    kind: 'upload',
    upload_id: uploadId,
    repository_id: null,
    url: null,
    branch_ref: null,
    commit_sha: null,
    file_count: files,
  });
  t.regex(audit.source.manifest_sha256, /^[0-9a-f]{64}$/);
  t.is(audit.source_manifest.file_count, files);
}

test('an audit of a tar.gz upload completes every stage and counts the archive by source type', async (t) => {
  const tenant = await createTenant(h.app.services.db);
  const made = await uploaded(
    tenant,
    await sourceTar([{ name: 'src/link.ts', type: 'symlink', linkname: 'index.ts' }]),
  );
  t.is(made.body.file_count, Object.keys(SOURCE).length + 1, 'the symlink counts as a file');
  const done = await runAudit(tenant, { upload_id: made.body.id });
  const audit = done.body;
  checkUploadAudit(t, audit, made.body.id, made.body.file_count);
  t.deepEqual(
    audit.stages.map((s: any) => [s.key, s.status]),
    STAGES.map((k) => [k, 'completed']),
  );
  t.is(audit.source.byte_count, SOURCE_BYTES);
  // README.md and the symlink are of no source type.
  t.deepEqual(audit.source_manifest.by_source_type, { cicd: 1, cloud: 1, code: 2, other: 2 });
  t.deepEqual(audit.coverage_gaps, []);
  // Its report is titled by the archive's name, never by a bare id.
  const report = await call(
    h.app.url,
    'GET',
    `${auditsPath(tenant.workspaceId)}/${audit.id}/report`,
    {
      token: tenant.token,
    },
  );
  t.deepEqual(report.body.content.upload, { id: made.body.id, filename: made.body.filename });
  const markdown = await call(
    h.app.url,
    'GET',
    `${auditsPath(tenant.workspaceId)}/${audit.id}/report?format=markdown`,
    { token: tenant.token },
  );
  t.true(markdown.text.includes(`${made.body.filename} (upload)`), markdown.text.slice(0, 200));
  t.false(markdown.text.includes(`audit ${audit.id}`));
});

test('an audit of a zip upload completes every stage and counts the archive by source type', async (t) => {
  const tenant = await createTenant(h.app.services.db);
  const made = await uploaded(tenant, await sourceZip(), 'application/zip');
  const done = await runAudit(tenant, { upload_id: made.body.id });
  const audit = done.body;
  checkUploadAudit(t, audit, made.body.id, Object.keys(SOURCE).length);
  t.deepEqual(
    audit.stages.map((s: any) => [s.key, s.status]),
    STAGES.map((k) => [k, 'completed']),
  );
  t.deepEqual(audit.source_manifest.by_source_type, { cicd: 1, cloud: 1, code: 2, other: 1 });
});

test('source_scope.exclude leaves matching files of an upload out', async (t) => {
  const tenant = await createTenant(h.app.services.db);
  const made = await uploaded(tenant, await sourceZip(), 'application/zip');
  const done = await runAudit(tenant, {
    upload_id: made.body.id,
    source_scope: { exclude: ['**/*.md'] },
  });
  const audit = done.body;
  checkUploadAudit(t, audit, made.body.id, Object.keys(SOURCE).length - 1);
  t.deepEqual(audit.source_manifest.by_source_type, { cicd: 1, cloud: 1, code: 2 });
  t.deepEqual(audit.source_scope, { exclude: ['**/*.md'] });
});

test('source_scope.source_types [code] skips the cloud and cicd stages of an upload audit', async (t) => {
  const tenant = await createTenant(h.app.services.db);
  const made = await uploaded(tenant, await sourceTar());
  const done = await runAudit(tenant, {
    upload_id: made.body.id,
    source_scope: { source_types: ['code'] },
  });
  const audit = done.body;
  checkUploadAudit(t, audit, made.body.id, Object.keys(SOURCE).length);
  t.deepEqual(
    audit.stages.map((s: any) => [s.key, s.status]),
    STAGES.map((k) => [k, k === 'cloud' || k === 'cicd' ? 'skipped' : 'completed']),
  );
});

test('createAudit: upload_id with branch_ref is 400 naming /branch_ref', async (t) => {
  const tenant = await createTenant(h.app.services.db);
  const made = await uploaded(tenant, await sourceTar([{ name: 'b.txt', data: 'b' }]));
  const reply = await call(h.app.url, 'POST', auditsPath(tenant.workspaceId), {
    token: tenant.token,
    body: { upload_id: made.body.id, branch_ref: 'main' },
  });
  t.is(reply.status, 400, reply.text);
  t.true(isProblem(reply));
  t.true(
    reply.body.errors.some((e: any) => e.path === '/branch_ref'),
    reply.text,
  );
  const audits = await h.app.services.db('audits').where({ workspace_id: tenant.workspaceId });
  t.is(audits.length, 0);
});

test("createAudit: another workspace's upload_id is 400 naming /upload_id", async (t) => {
  const owner = await createTenant(h.app.services.db);
  const made = await uploaded(owner, await sourceTar([{ name: 'o.txt', data: 'o' }]));
  const other = await createTenant(h.app.services.db);
  const reply = await call(h.app.url, 'POST', auditsPath(other.workspaceId), {
    token: other.token,
    body: { upload_id: made.body.id },
  });
  t.is(reply.status, 400, reply.text);
  t.true(isProblem(reply));
  t.true(
    reply.body.errors.some((e: any) => e.path === '/upload_id'),
    reply.text,
  );
});

// ---------------------------------------------------------------------------------------------
// Refusals at upload time

test('a ../ entry is 400 archive_path_traversal (tar.gz and zip)', async (t) => {
  const tgz = await tarGz([
    { name: 'ok.txt', data: 'ok' },
    { name: 'src/../../evil.sh', data: 'x' },
  ]);
  const reply = await refused(t, tgz, 400, 'archive_path_traversal');
  t.is(reply.body.path, 'src/../../evil.sh');
  const zip = patch(
    await zipBytes([{ name: 'AA/evil.sh', data: 'x' }]),
    'AA/evil.sh',
    '../evil.sh',
  );
  await refused(t, zip, 400, 'archive_path_traversal', 'application/zip');
});

test('an absolute path is 400 archive_absolute_path', async (t) => {
  const tgz = await tarGz([{ name: '/etc/cron.d/evil', data: '* * * * * root sh\n' }]);
  await refused(t, tgz, 400, 'archive_absolute_path');
  const zip = patch(
    await zipBytes([{ name: 'Xetc/passwd', data: 'x' }]),
    'Xetc/passwd',
    '/etc/passwd',
  );
  await refused(t, zip, 400, 'archive_absolute_path', 'application/zip');
});

test('a symlink out of the root is 400 archive_link_outside_root', async (t) => {
  const tgz = await tarGz([
    { name: 'src/a.ts', data: 'a' },
    { name: 'src/up', type: 'symlink', linkname: '../../etc/passwd' },
  ]);
  await refused(t, tgz, 400, 'archive_link_outside_root');
  const absolute = await tarGz([{ name: 'passwd', type: 'symlink', linkname: '/etc/passwd' }]);
  await refused(t, absolute, 400, 'archive_link_outside_root');
});

test('more files than DEFAULT_ARCHIVE_LIMITS.maxFiles is 400 archive_too_many_files', async (t) => {
  const count = DEFAULT_ARCHIVE_LIMITS.maxFiles + 1;
  const tgz = await manyFilesTarGz(count);
  // Refused for its count, not its ratio: the tar stream stays well under the ratio limit.
  const tarBytes = (count + 2) * 512;
  t.true(
    tarBytes < DEFAULT_ARCHIVE_LIMITS.maxRatio * tgz.length,
    `${tgz.length} bytes inflate to ${tarBytes}`,
  );
  const reply = await refused(t, tgz, 400, 'archive_too_many_files');
  t.is(reply.body.limit, DEFAULT_ARCHIVE_LIMITS.maxFiles);
  // One fewer is fine.
  const tenant = await createTenant(h.app.services.db);
  const ok = await uploaded(tenant, await manyFilesTarGz(DEFAULT_ARCHIVE_LIMITS.maxFiles));
  t.is(ok.body.file_count, DEFAULT_ARCHIVE_LIMITS.maxFiles);
});

test('a decompression bomb is 400 archive_ratio_exceeded', async (t) => {
  // 50 MiB of zeros: under maxFileBytes (64 MiB), so only the ratio can refuse it.
  const size = 50 * MiB;
  t.true(size < DEFAULT_ARCHIVE_LIMITS.maxFileBytes);
  const tgz = await zerosTarGz('bomb.bin', size);
  const limit = Math.max(DEFAULT_ARCHIVE_LIMITS.maxRatio * tgz.length, RATIO_GRACE_BYTES);
  t.true(size > 2 * limit, `${tgz.length} bytes inflate to ${size}, limit ${limit}`);
  const reply = await refused(t, tgz, 400, 'archive_ratio_exceeded');
  t.is(reply.body.limit, limit);
  t.is(reply.body.archiveBytes, tgz.length);
  t.true(reply.body.inflated < limit + 256 * 1024, 'stopped near the limit');
});

test('gzip magic followed by garbage is 400 archive_corrupt', async (t) => {
  const bytes = Buffer.concat([Buffer.from([0x1f, 0x8b]), crypto.randomBytes(4096)]);
  await refused(t, bytes, 400, 'archive_corrupt');
  const zip = await zipBytes([{ name: 'a.txt', data: 'hello world', compress: false }]);
  await refused(t, zip.subarray(0, zip.length - 10), 400, 'archive_corrupt', 'application/zip');
});

test('a body that is no archive is 415 unsupported_media_type, saying what is wrong with the bytes', async (t) => {
  const text = await refused(
    t,
    Buffer.from(`just some text ${crypto.randomUUID()}\n`),
    415,
    'unsupported_media_type',
  );
  // The Content-Type (application/gzip) was accepted: the detail must not say otherwise.
  t.regex(text.body.detail, /neither a gzip-compressed tar nor a zip archive/);
  t.notRegex(text.body.detail, /is not accepted/);
  await refused(
    t,
    crypto.randomBytes(2048),
    415,
    'unsupported_media_type',
    'application/octet-stream',
  );
  // (The empty blob may exist for another test's audit files: refused() would check it is gone.)
  const empty = await upload(await createTenant(h.app.services.db), Buffer.alloc(0));
  t.is(empty.status, 415, empty.text);
  t.true(isProblem(empty), empty.text);
  t.regex(empty.body.detail, /request body is empty/);
});

test('a Content-Type that is no archive type is 415 before the body is read', async (t) => {
  const tgz = await sourceTar([{ name: 'ct.txt', data: 'ct' }]);
  for (const contentType of ['text/plain', 'application/json', 'application/x-tar']) {
    const reply = await refused(t, tgz, 415, 'unsupported_media_type', contentType);
    t.true(reply.body.detail.includes(contentType), reply.text);
  }
});

test('a body over UPLOAD_LIMIT_BYTES is 413 payload_too_large', async (t) => {
  const small = await startAuditHarness({ config: { uploadLimitBytes: 1024 } });
  t.teardown(() => small.close());
  const bytes = await tarGz([{ name: 'a.txt', data: 'a' }]);
  // An archive over the limit: random data does not compress.
  const big = await tarGz([{ name: 'big.bin', data: crypto.randomBytes(2048) }]);
  t.true(big.length > 1024);
  const reply = await refused(t, big, 413, 'payload_too_large', 'application/gzip', small);
  t.true(reply.body.detail.includes('1024'), reply.text);

  // Chunked, without a Content-Length: refused while streaming into the blob store.
  const tenant = await createTenant(small.app.services.db);
  const res = await fetch(`${small.app.url}${uploadsPath(tenant.workspaceId)}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${tenant.token}`, 'Content-Type': 'application/gzip' },
    body: new ReadableStream({
      start(controller) {
        controller.enqueue(new Uint8Array(big.subarray(0, 1000)));
        controller.enqueue(new Uint8Array(big.subarray(1000)));
        controller.close();
      },
    }),
    duplex: 'half',
  } as RequestInit);
  t.is(res.status, 413, await res.clone().text());
  t.is(((await res.json()) as { code: string }).code, 'payload_too_large');
  t.is(await uploadRows(small.app.services.db, tenant), 0);
  const tmp = `${small.app.services.config.blobDir}/tmp`;
  t.deepEqual(fs.existsSync(tmp) ? fs.readdirSync(tmp) : [], [], 'no temporary file is left');

  // Under the limit is fine on the same harness.
  const ok = await upload(tenant, bytes, 'application/gzip', { base: small.app.url });
  t.is(ok.status, 201, ok.text);
});

// ---------------------------------------------------------------------------------------------
// The blob store is shared by uploads and the files of audits.

/** Audits an upload holding `files`; returns the audit once its source files are stored. */
async function auditedFiles(t: ExecutionContext, files: Record<string, string>) {
  const tenant = await createTenant(h.app.services.db);
  const made = await uploaded(
    tenant,
    await tarGz(Object.entries(files).map(([name, data]) => ({ name, data }))),
  );
  const done = await runAudit(tenant, { upload_id: made.body.id });
  t.is(done.body.status, 'completed', JSON.stringify(done.body.stages));
  const rows = await h.app.services
    .db('audit_source_files')
    .where({ audit_id: done.body.id })
    .orderBy('path');
  t.deepEqual(
    rows.map((r: { path: string; sha256: string; stored: boolean }) => [
      r.path,
      r.sha256,
      r.stored,
    ]),
    Object.entries(files)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([name, data]) => [name, sha256(data), true]),
  );
  for (const data of Object.values(files)) t.true(fs.existsSync(blobPath(h, sha256(data))));
  return tenant;
}

// Product bug: createUpload's `discard` (api/resources/uploads.ts) deletes the refused body's blob
// whenever no *upload* row has its sha256, but the blob store is content-addressed and shared
// with the source files that audits store (activities/audit.ts, addFile -> blobs.put). A refused
// body whose bytes equal a stored source file deletes that file's blob from under its audit.
test('a refused non-archive body does not delete the same bytes stored for an audit file', async (t) => {
  const notes = `plain notes ${crypto.randomUUID()}\n`;
  const tenant = await auditedFiles(t, { 'notes.txt': notes, 'src/app.ts': 'export {};\n' });
  const reply = await upload(tenant, Buffer.from(notes), 'application/octet-stream');
  t.is(reply.status, 415, reply.text);
  t.is(reply.body.code, 'unsupported_media_type');
  t.true(fs.existsSync(blobPath(h, sha256(notes))), 'the blob of the audit file notes.txt is kept');
});

test('an empty upload body does not delete the blob of empty files stored for an audit', async (t) => {
  const tenant = await auditedFiles(t, { 'src/__init__.py': '', 'src/app.py': 'x = 1\n' });
  const reply = await upload(tenant, Buffer.alloc(0), 'application/gzip');
  t.is(reply.status, 415, reply.text);
  t.is(reply.body.code, 'unsupported_media_type');
  t.true(fs.existsSync(blobPath(h, sha256(''))), 'the blob of the empty src/__init__.py is kept');
});
