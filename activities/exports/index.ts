/**
 * An export's rendering (ExportWorkflow): the audit's report, snapshot, CODEOWNERS owners and
 * the repository's decisions rendered as one format into a file in the blob store, kept until
 * `retained_until` (the retention sweep expires it: activities/retention).
 */
import { Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { pack } from 'tar-stream';
import { recordWrite } from '../../db/activity';
import { lockBlob } from '../../db/attachments';
import { evidenceOf, snapshotOfAudit } from '../../db/architecture';
import { getAuditById, type AuditRow } from '../../db/audits';
import {
  decisionsForExport,
  getExportById,
  markExportAvailable,
  markExportFailed,
  markExportRunning,
  type ExportRow,
} from '../../db/exports';
import { currentReport } from '../../db/reports';
import {
  renderExportText,
  renderMadr,
  type ExportFile,
  type ExportFormat,
  type ExportInput,
} from '../../domain/exports/render';
import type { AuditReportContent } from '../../domain/reports/report';
import type { BlobStore } from '../../platform/blob-store';
import type { Logger } from '../../platform/logger';
import { ownersOf } from '../changes';

export interface ExportActivityDeps {
  db: Knex;
  log: Logger;
  blobs: BlobStore;
}

/** Who the system's export write records name as the actor. */
const EXPORT_ACTOR = 'system:exports';
const gzip = promisify(zlib.gzip);

/** A tar.gz of text files, with a fixed mtime so the same files give the same bytes. */
async function tarGz(files: ExportFile[], mtime: Date): Promise<Buffer> {
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on('data', (c: unknown) => chunks.push(c as Buffer));
  const done = new Promise<void>((resolve, reject) => {
    tar.on('end', resolve);
    tar.on('error', reject);
  });
  for (const f of files) tar.entry({ name: f.path, mtime, mode: 0o644 }, f.text);
  tar.finalize();
  await done;
  return gzip(Buffer.concat(chunks));
}

/** What every format is rendered from. */
async function exportInputOf(
  db: Knex,
  blobs: BlobStore,
  audit: AuditRow,
  report: AuditReportContent,
): Promise<ExportInput> {
  const snapshot = await snapshotOfAudit(db, audit.id);
  if (!snapshot) throw new Error(`audit ${audit.id} has no snapshot`);
  const [evidence, owners, decisions] = await Promise.all([
    evidenceOf(db, snapshot.id),
    ownersOf(db, blobs, audit.id),
    audit.repository_id
      ? decisionsForExport(db, audit.workspace_id, audit.repository_id)
      : Promise.resolve([]),
  ]);
  const pathOf = new Map(
    evidence.map((e) => [e.id, (e.location as { path?: string } | null)?.path ?? null]),
  );
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  return {
    report,
    entities: snapshot.entities.map((e) => {
      const ids = Array.isArray(e.evidence_ids) ? (e.evidence_ids as string[]) : [];
      const found = new Set<string>();
      for (const id of ids) {
        const path = pathOf.get(id);
        if (path && owners) for (const o of owners.ownersOf(path)) found.add(o);
      }
      return {
        canonical_key: text(e.canonical_key),
        kind: text(e.kind),
        name: text(e.name),
        attributes: (e.attributes ?? {}) as Record<string, unknown>,
        owners: [...found].sort(),
      };
    }),
    relationships: snapshot.relationships.map((r) => ({
      canonical_key: text(r.canonical_key),
      source_key: text(r.source_key),
      target_key: text(r.target_key),
      kind: text(r.kind),
      attributes: (r.attributes ?? {}) as Record<string, unknown>,
    })),
    decisions: decisions.map((d) => ({
      number: d.number,
      title: d.title,
      status: d.status,
      question: d.question,
      context: d.context,
      options: d.options,
      selected_option_id: d.selected_option_id,
      latest_rationale: d.latest_rationale,
      affected_entity_keys: d.affected_entity_keys,
      deciders: d.approvers,
      date: (d.approved_at ?? d.created_at).toISOString().slice(0, 10),
    })),
  };
}

const exportWrite = (db: Knex, row: ExportRow, action: string, details: Record<string, unknown>) =>
  recordWrite(db, {
    workspaceId: row.workspace_id,
    actorId: null,
    actorLogin: EXPORT_ACTOR,
    tokenId: null,
    requestId: null,
    action,
    resourceType: 'export',
    resourceId: row.id,
    details: { audit_id: row.audit_id, format: row.format, ...details },
  });

export function createExportActivities(deps: ExportActivityDeps) {
  const { db, blobs } = deps;
  const failExport = async (exportId: string, code: string, message: string): Promise<void> => {
    await db.transaction(async (trx) => {
      const failed = await markExportFailed(trx, exportId, code, message);
      if (failed) await exportWrite(trx, failed, 'export.failed', { error_code: code });
    });
  };
  return {
    /**
     * Renders the export and stores its file; idempotent (a finished export is left as it is).
     * A report that cannot be rendered fails the export for good (`export_failed` event).
     */
    async renderExport(exportId: string): Promise<{ status: string; sha256: string | null }> {
      const row = await getExportById(db, exportId);
      if (row.status !== 'queued' && row.status !== 'running')
        return { status: row.status, sha256: row.sha256 };
      await markExportRunning(db, exportId);
      const audit = await getAuditById(db, row.audit_id);
      const report = await currentReport(db, audit);
      if (!report) {
        await failExport(exportId, 'report_missing', `Audit ${audit.id} has no report.`);
        return { status: 'failed', sha256: null };
      }
      const input = await exportInputOf(db, blobs, audit, report.content);
      const format = row.format as ExportFormat;
      const bytes =
        format === 'madr'
          ? await tarGz(renderMadr(input), audit.completed_at ?? audit.created_at)
          : Buffer.from(renderExportText(format, input), 'utf8');
      Context.current().heartbeat();
      const sha256 = await blobs.put(bytes);
      const done = await db.transaction(async (trx) => {
        // Under the blob lock: a sweep releasing the same bytes meanwhile either ran before (the
        // file is put back) or sees this export holding them.
        await lockBlob(trx, sha256);
        if (!blobs.has(sha256)) await blobs.put(bytes);
        const available = await markExportAvailable(trx, exportId, { sha256, size: bytes.length });
        if (available)
          await exportWrite(trx, available, 'export.completed', {
            sha256,
            size_bytes: bytes.length,
            report_content_sha256: report.content_sha256,
            retained_until: available.retained_until?.toISOString() ?? null,
          });
        return available;
      });
      deps.log.info({ export_id: exportId, format, bytes: bytes.length }, 'export rendered');
      return { status: done?.status ?? 'available', sha256 };
    },

    /** Marks the export failed (a render that kept failing), once. */
    failExport,
  };
}

export type ExportActivities = ReturnType<typeof createExportActivities>;
