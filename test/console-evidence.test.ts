/**
 * getAuditEvidence (what the console's explorer opens when an edge is clicked): an evidence item
 * of a real audit with its file, line range, the cited lines as the audit read them and whether
 * they verify against the recorded SHA-256; a changed stored file no longer verifies.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, type Tenant } from './helpers/factories';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { call, isProblem } from './helpers/http';
import { BlobStore } from '../platform/blob-store';

let h: AuditHarness;
let tenant: Tenant;
let other: Tenant;
let repo: TestRepo;
let auditId: string;

test.before(async () => {
  h = await startAuditHarness();
  tenant = await createTenant(h.app.services.db);
  other = await createTenant(h.app.services.db);
  repo = createRepo(SAMPLE_FILES);
  const created = await call(h.app.url, 'POST', `${ws()}/repositories`, {
    token: tenant.token,
    body: { name: 'shop', url: `file://${repo.dir}` },
  });
  const started = await call(h.app.url, 'POST', `${ws()}/audits`, {
    token: tenant.token,
    body: { repository_id: created.body.id },
  });
  const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, started.body.id);
  if (done.body.status !== 'completed') throw new Error(JSON.stringify(done.body.stages));
  auditId = done.body.id;
});

test.after.always(async () => {
  await h?.close();
  repo?.remove();
});

function ws(t: Tenant = tenant) {
  return `/v1/workspaces/${t.workspaceId}`;
}

async function truth() {
  const arch = await call(h.app.url, 'GET', `${ws()}/audits/${auditId}/architecture`, {
    token: tenant.token,
  });
  return arch.body as {
    relationships: Array<{ canonical_key: string; evidence_ids: string[] }>;
    evidence: Array<{
      id: string;
      content_sha256: string;
      location: { path: string; start_line: number; end_line: number };
    }>;
  };
}

test.serial('an edge’s evidence: file, lines as in the repository, hash verified', async (t) => {
  const { relationships, evidence } = await truth();
  const edge = relationships.find((r) => r.evidence_ids.length > 0)!;
  t.truthy(edge);
  for (const id of edge.evidence_ids) {
    const item = evidence.find((e) => e.id === id)!;
    const reply = await call(h.app.url, 'GET', `${ws()}/audits/${auditId}/evidence/${id}`, {
      token: tenant.token,
    });
    t.is(reply.status, 200, reply.text);
    const body = reply.body;
    t.is(body.evidence.id, id);
    t.is(body.path, item.location.path);
    t.is(body.start_line, item.location.start_line);
    t.is(body.end_line, item.location.end_line);
    // The lines are exactly the repository's lines at that range.
    const text = fs.readFileSync(path.join(repo.dir, item.location.path), 'utf8').split('\n');
    t.deepEqual(
      body.lines,
      text
        .slice(item.location.start_line - 1, item.location.end_line)
        .map((line, i) => ({ number: item.location.start_line + i, text: line })),
    );
    t.is(body.verification, 'verified');
    t.is(
      body.file_sha256,
      crypto
        .createHash('sha256')
        .update(fs.readFileSync(path.join(repo.dir, item.location.path)))
        .digest('hex'),
    );
    t.false(body.lines_truncated);
  }
});

test.serial('unknown evidence, another workspace and bad ids are problems', async (t) => {
  const { evidence } = await truth();
  const missing = await call(
    h.app.url,
    'GET',
    `${ws()}/audits/${auditId}/evidence/${crypto.randomUUID()}`,
    { token: tenant.token },
  );
  t.is(missing.status, 404);
  t.true(isProblem(missing));
  const foreign = await call(
    h.app.url,
    'GET',
    `${ws(other)}/audits/${auditId}/evidence/${evidence[0]!.id}`,
    { token: other.token },
  );
  t.is(foreign.status, 404);
  const bad = await call(h.app.url, 'GET', `${ws()}/audits/${auditId}/evidence/not-a-uuid`, {
    token: tenant.token,
  });
  t.is(bad.status, 400);
  t.is(bad.body.code, 'validation_failed');
});

test.serial('a stored file changed after the audit no longer verifies', async (t) => {
  const { evidence } = await truth();
  const item = evidence.find((e) => e.location?.path === 'docker-compose.yml')!;
  const row = await h.app.services
    .db('audit_source_files')
    .where({ audit_id: auditId, path: item.location.path })
    .first();
  const blob = new BlobStore(h.app.services.config.blobDir).pathOf(row.sha256);
  const original = fs.readFileSync(blob);
  try {
    const lines = original.toString('utf8').split('\n');
    lines[item.location.start_line - 1] += ' # edited';
    fs.writeFileSync(blob, lines.join('\n'));
    const reply = await call(h.app.url, 'GET', `${ws()}/audits/${auditId}/evidence/${item.id}`, {
      token: tenant.token,
    });
    t.is(reply.status, 200);
    t.is(reply.body.verification, 'mismatch');
    t.true(reply.body.lines[0].text.endsWith(' # edited'));
  } finally {
    fs.writeFileSync(blob, original);
  }
});
