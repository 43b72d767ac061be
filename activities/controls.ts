/**
 * Writing the controls stage's results: assessments of the audit, findings upserted by
 * fingerprint (one per repository), and at the audit's completion the findings it no longer
 * observed resolved. Both steps are idempotent (safe to retry).
 */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { ApplicationFailure } from '@temporalio/activity';
import { artifactsOfAudit } from '../db/store/agents';
import { appendLog, getAuditById, type AuditRow } from '../db/store/audits';
import {
  assessmentCount,
  coversWholeSource,
  ensureCatalog,
  type FindingRow,
} from '../db/store/controls';
import { recordWrite } from '../db/store/events';
import { describeAssessments, type ControlArtifact } from './agents/controls';

/** Findings are per repository; an upload audit's findings stand alone. */
export const scopeKeyOf = (audit: Pick<AuditRow, 'id' | 'repository_id'>) =>
  audit.repository_id ?? `audit:${audit.id}`;

const systemWrite = (
  db: Knex,
  audit: AuditRow,
  f: Pick<FindingRow, 'id' | 'fingerprint' | 'control_key' | 'title'>,
  action: string,
  from: string,
  to: string,
) =>
  recordWrite(db, {
    workspaceId: audit.workspace_id,
    actorId: null,
    actorLogin: 'system',
    tokenId: null,
    requestId: null,
    action,
    resourceType: 'finding',
    resourceId: f.id,
    details: {
      control_key: f.control_key,
      title: f.title,
      fingerprint: f.fingerprint,
      audit_id: audit.id,
      changes: { status: { from, to } },
    },
  });

/** Stores the controls artifact of the audit as assessments and findings, in one transaction. */
export async function persistControls(db: Knex, auditId: string): Promise<{ summary: string }> {
  const existing = await assessmentCount(db, auditId);
  if (existing > 0) return { summary: `${existing} assessments already stored` };
  const audit = await getAuditById(db, auditId);
  const produced = (await artifactsOfAudit(db, auditId, 'controls')).find(
    (a) => a.agent_key === 'controls',
  );
  if (!produced)
    throw ApplicationFailure.create({
      type: 'controls_missing',
      message: 'The controls stage produced no assessments.',
      nonRetryable: true,
    });
  const artifact = produced.artifact.artifact as unknown as ControlArtifact;
  const scopeKey = scopeKeyOf(audit);
  let created = 0;
  let reopened = 0;
  let observed = 0;
  await db.transaction(async (trx) => {
    const catalog = await ensureCatalog(trx);
    const now = new Date();
    for (const [position, a] of artifact.assessments.entries()) {
      const control = catalog.get(a.control_key);
      if (!control) continue;
      const findingIds: string[] = [];
      for (const f of a.findings) {
        const locations = f.location ? [f.location] : [];
        const detail = `${a.rationale} Control: ${a.description}`;
        // Insert-or-nothing first: a concurrent audit of the same repository inserting the same
        // fingerprint makes this wait for it and then find its row, instead of failing.
        const fresh = crypto.randomUUID();
        const inserted = await trx('findings')
          .insert({
            id: fresh,
            workspace_id: audit.workspace_id,
            repository_id: audit.repository_id,
            scope_key: scopeKey,
            control_id: control.id,
            control_key: a.control_key,
            severity: f.severity,
            title: f.title,
            detail,
            fingerprint: f.fingerprint,
            status: 'open',
            entity_key: f.entity_key,
            evidence_ids: JSON.stringify(f.evidence_ids),
            locations: JSON.stringify(locations),
            first_seen_audit_id: audit.id,
            last_seen_audit_id: audit.id,
            first_seen_at: now,
            last_seen_at: now,
            occurrences: 1,
          })
          .onConflict(['workspace_id', 'scope_key', 'fingerprint'])
          .ignore()
          .returning('id');
        const before = inserted.length
          ? undefined
          : await trx<FindingRow>('findings')
              .where({
                workspace_id: audit.workspace_id,
                scope_key: scopeKey,
                fingerprint: f.fingerprint,
              })
              .forUpdate()
              .first();
        if (!inserted.length && !before)
          throw new Error(`finding ${f.fingerprint} neither inserted nor found`);
        let id: string;
        if (!before) {
          id = fresh;
          created += 1;
        } else {
          id = before.id;
          // An older audit finishing late counts its sighting but does not roll the finding
          // back to what an older commit showed (nor reopen what a newer audit resolved).
          const createdAt = async (auditId: string | null) =>
            auditId
              ? (
                  await trx('audits')
                    .where({ id: auditId })
                    .first<{ created_at: Date } | undefined>('created_at')
                )?.created_at.getTime()
              : undefined;
          const notAfter = (t: number | undefined) =>
            t === undefined || t <= audit.created_at.getTime();
          const newer = notAfter(await createdAt(before.last_seen_audit_id));
          const reopen =
            before.status === 'resolved' && notAfter(await createdAt(before.resolved_audit_id));
          await trx('findings')
            .where({ id })
            .update({
              occurrences: trx.raw('occurrences + 1'),
              updated_at: now,
              ...(newer
                ? {
                    control_id: control.id,
                    severity: f.severity,
                    title: f.title,
                    detail,
                    entity_key: f.entity_key,
                    evidence_ids: JSON.stringify(f.evidence_ids),
                    locations: JSON.stringify(locations),
                    last_seen_audit_id: audit.id,
                    last_seen_at: now,
                  }
                : {}),
              ...(reopen ? { status: 'open', resolved_audit_id: null, resolved_at: null } : {}),
            });
          if (reopen) {
            reopened += 1;
            await systemWrite(trx, audit, before, 'finding.reopened', 'resolved', 'open');
          }
        }
        await trx('audit_findings')
          .insert({ audit_id: audit.id, finding_id: id, workspace_id: audit.workspace_id })
          .onConflict(['audit_id', 'finding_id'])
          .ignore();
        findingIds.push(id);
        observed += 1;
      }
      await trx('control_assessments').insert({
        id: crypto.randomUUID(),
        audit_id: audit.id,
        workspace_id: audit.workspace_id,
        control_id: control.id,
        mapping_version_id: control.mapping_version_id,
        control_key: a.control_key,
        title: a.title,
        description: a.description,
        domain: a.domain,
        severity: a.severity,
        status: a.status,
        calculation_version: artifact.catalog_version,
        input_hash: a.input_hash,
        rationale: a.rationale,
        applicability: a.applicability,
        applicability_rationale: a.applicability_rationale,
        confidence: a.confidence,
        evidence_ids: JSON.stringify(a.evidence_ids),
        finding_ids: JSON.stringify(findingIds),
        architecture_relationship_ids: JSON.stringify(a.architecture_relationship_ids),
        stale_evidence_ids: JSON.stringify(a.stale_evidence_ids),
        conflicting_evidence_ids: JSON.stringify(a.conflicting_evidence_ids),
        missing_requirement_keys: JSON.stringify(a.missing_requirement_keys),
        exception_id: null,
        requirements: JSON.stringify(a.requirements),
        overlay_version: 0,
        calculated_at: now,
        // One millisecond apart, earliest last: the newest-first keyset pages list the
        // assessments in control key order.
        created_at: new Date(now.getTime() - position),
      });
      if (a.status === 'fail')
        await appendLog(trx, audit.id, {
          level: 'warning',
          source: 'control',
          message: `${a.control_key} failed (${a.severity}): ${a.rationale}`,
          details: { control_key: a.control_key, finding_ids: findingIds },
        });
    }
  });
  const summary = `${observed} findings (${created} new${reopened ? `, ${reopened} reopened` : ''})`;
  await appendLog(db, auditId, {
    level: 'info',
    source: 'control',
    message: `${describeAssessments(artifact.assessments)}; ${summary}`,
  });
  return { summary };
}

/**
 * Called as a completed audit is finished: open findings of its repository that it did not
 * observe are resolved, unless the user set them accepted_risk/false_positive, the audit looked
 * at part of the source only, or a newer audit (by creation) saw the finding last.
 */
export async function settleFindings(trx: Knex, auditId: string): Promise<number> {
  const audit = await getAuditById(trx, auditId);
  if ((await assessmentCount(trx, auditId)) === 0 || !coversWholeSource(audit)) return 0;
  const stale = await trx<FindingRow>('findings as f')
    .join('audits as seen', 'seen.id', 'f.last_seen_audit_id')
    .select('f.*')
    .where({
      'f.workspace_id': audit.workspace_id,
      'f.scope_key': scopeKeyOf(audit),
      'f.status': 'open',
    })
    .andWhere('seen.created_at', '<=', audit.created_at)
    .whereNotExists(
      trx('audit_findings').where('audit_id', auditId).andWhereRaw('finding_id = f.id'),
    );
  for (const f of stale) {
    await trx('findings').where({ id: f.id }).update({
      status: 'resolved',
      resolved_audit_id: auditId,
      resolved_at: trx.fn.now(),
      updated_at: trx.fn.now(),
    });
    await systemWrite(trx, audit, f, 'finding.resolved', 'open', 'resolved');
  }
  if (stale.length)
    await appendLog(trx, auditId, {
      level: 'info',
      source: 'control',
      message: `${stale.length} finding(s) no longer observed: resolved`,
      details: { finding_ids: stale.map((f) => f.id) },
    });
  return stale.length;
}
