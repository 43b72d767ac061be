/**
 * Writing the controls stage's results: assessments of the audit, findings upserted by
 * fingerprint (one per repository), and at the audit's completion the findings it no longer
 * observed resolved. Both steps are idempotent (safe to retry).
 */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { ApplicationFailure } from '@temporalio/activity';
import { artifactsOfAudit } from '../../db/agents';
import { snapshotOfAudit, snapshotRefOfAudit } from '../../db/architecture';
import { evidenceObservedBefore } from '../../db/ingestion';
import { appendLog, auditsCreatedAt, getAuditById, type AuditRow } from '../../db/audits';
import {
  assessmentCount,
  ensureCatalog,
  insertAssessments,
  insertNewFindings,
  coversWholeSource,
  lockFindings,
  nameUuid,
  readWholeSource,
  recordSightings,
  type FindingRow,
  type NewAssessment,
  type Sighting,
} from '../../db/controls';
import {
  linkAuditFindings,
  resolveUnobserved,
  settleObservations,
  type ResolvedFinding,
} from '../../db/findings';
import { recordBulkWrite } from '../../db/activity';
import { exceptionsForAudit } from '../../db/exceptions';
import { coveringException } from '../../domain/controls/exceptions';
import { storableText } from '../../domain/text';
import { describeAssessments, type ControlArtifact } from '../../analysis/controls-artifact';

/**
 * Which evidence of an assessment is stale: of the ids it cites and the evidence of the
 * relationships it names, those observed more than `days` before now (ingested evidence keeps
 * its observation time; what the audit read from files is observed by the audit).
 */
async function staleEvidence(
  db: Knex,
  auditId: string,
  days: number,
): Promise<(a: { evidence_ids: string[]; architecture_relationship_ids: string[] }) => string[]> {
  // The snapshot's graph (tens of megabytes for a large system, parsed on the worker's main
  // thread) is read only when some evidence is old, which only ingested evidence can be.
  const ref = await snapshotRefOfAudit(db, auditId);
  if (!ref) return () => [];
  const old = await evidenceObservedBefore(db, ref.id, new Date(Date.now() - days * 86_400_000));
  if (old.size === 0) return () => [];
  const snapshot = await snapshotOfAudit(db, auditId);
  if (!snapshot) return () => [];
  const relEvidence = new Map(
    snapshot.relationships.map((r) => [
      r.canonical_key as string,
      Array.isArray(r.evidence_ids) ? (r.evidence_ids as string[]) : [],
    ]),
  );
  return (a) =>
    [
      ...a.evidence_ids,
      ...a.architecture_relationship_ids.flatMap((k) => relEvidence.get(k) ?? []),
    ].filter((id) => old.has(id));
}

/** Findings are per repository; an upload audit's findings stand alone. */
export const scopeKeyOf = (audit: Pick<AuditRow, 'id' | 'repository_id'>) =>
  audit.repository_id ?? `audit:${audit.id}`;

/** How many finding ids an audit log line or an activity item lists (the count is whole). */
const LISTED_IDS = 100;

/**
 * The records of findings an audit moved from `from` to `to`: an audit event per finding and
 * one activity item for the audit, written in a few statements whatever the count, with ids
 * derived from the audit and the finding (a retried step writes nothing twice).
 */
const systemWrites = async (
  db: Knex,
  audit: AuditRow,
  findings: readonly Pick<FindingRow, 'id' | 'fingerprint' | 'control_key' | 'title'>[],
  action: 'finding.resolved' | 'finding.reopened',
  from: string,
  to: string,
) =>
  recordBulkWrite(db, {
    workspaceId: audit.workspace_id,
    actorLogin: 'system',
    action,
    resourceType: 'finding',
    events: findings.map((f) => ({
      id: nameUuid(`audit-event:${audit.id}:${action}:${f.id}`),
      resourceId: f.id,
      details: {
        control_key: f.control_key,
        title: f.title,
        fingerprint: f.fingerprint,
        audit_id: audit.id,
        changes: { status: { from, to } },
      },
    })),
    summary: {
      id: nameUuid(`activity:${audit.id}:${action}`),
      action: action === 'finding.resolved' ? 'findings.resolved' : 'findings.reopened',
      resourceType: 'audit',
      resourceId: audit.id,
      details: {
        audit_id: audit.id,
        count: findings.length,
        finding_ids: findings.slice(0, LISTED_IDS).map((f) => f.id),
        changes: { status: { from, to } },
      },
    },
  });

/**
 * Stores the controls artifact of the audit as assessments and findings, in one transaction.
 * `staleAfterDays`: evidence an assessment uses (its own, and that of the relationships it
 * rests on) observed longer ago than this is listed in its stale_evidence_ids.
 */
export async function persistControls(
  db: Knex,
  auditId: string,
  options: { staleAfterDays: number },
): Promise<{ summary: string }> {
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
  const staleOf = await staleEvidence(db, auditId, options.staleAfterDays);
  const scopeKey = scopeKeyOf(audit);
  let created = 0;
  let reopened = 0;
  let observed = 0;
  await db.transaction(async (trx) => {
    const catalog = await ensureCatalog(trx);
    const now = new Date();
    // Batched, so that the row locks a concurrent audit of the same repository waits on are
    // held for a few statements, not a few per finding. Rows are written in fingerprint order
    // (every audit locks them in the same order: no deadlock between two audits).
    type Seen = {
      assessment: ControlArtifact['assessments'][number];
      finding: ControlArtifact['assessments'][number]['findings'][number];
      control: { id: string };
      id: string;
    };
    const sightings = new Map<string, Seen>();
    for (const a of artifact.assessments) {
      const control = catalog.get(a.control_key);
      if (!control) continue;
      for (const f of a.findings)
        if (!sightings.has(f.fingerprint))
          sightings.set(f.fingerprint, {
            assessment: a,
            finding: f,
            control,
            id: crypto.randomUUID(),
          });
    }
    const ordered = [...sightings.values()].sort((x, y) =>
      x.finding.fingerprint < y.finding.fingerprint ? -1 : 1,
    );
    // One detail per assessment, bounded: a rationale names every failing check, and copied
    // into each of 10,000 findings it made gigabytes of statement text (issue 24).
    const details = new Map(
      artifact.assessments.map((a) => [
        a,
        storableText(`${a.rationale} Control: ${a.description}`),
      ]),
    );
    const fieldsOf = (x: Seen) => ({
      control_id: x.control.id,
      severity: x.finding.severity,
      title: x.finding.title,
      detail: details.get(x.assessment)!,
      entity_key: x.finding.entity_key,
      evidence_ids: x.finding.evidence_ids,
      locations: x.finding.location ? [x.finding.location] : [],
    });

    // Insert-or-nothing first: a concurrent audit inserting the same fingerprint makes this
    // wait for it and then find its row, instead of failing.
    const inserted = await insertNewFindings(
      trx,
      ordered.map((x) => ({
        id: x.id,
        workspace_id: audit.workspace_id,
        repository_id: audit.repository_id,
        scope_key: scopeKey,
        control_key: x.assessment.control_key,
        fingerprint: x.finding.fingerprint,
        status: 'open',
        first_seen_audit_id: audit.id,
        last_seen_audit_id: audit.id,
        first_seen_at: now,
        last_seen_at: now,
        occurrences: 1,
        ...fieldsOf(x),
      })),
    );
    created = inserted.size;
    const seenBefore = ordered.filter((x) => !inserted.has(x.finding.fingerprint));
    if (seenBefore.length > 0) {
      const existing = await lockFindings(
        trx,
        audit.workspace_id,
        scopeKey,
        seenBefore.map((x) => x.finding.fingerprint),
      );
      const byFingerprint = new Map(existing.map((f) => [f.fingerprint, f]));
      // When the audits that last saw / resolved these findings were created.
      const auditIds = [
        ...new Set(
          existing.flatMap((f) =>
            [f.last_seen_audit_id, f.resolved_audit_id].filter((id): id is string => !!id),
          ),
        ),
      ];
      const createdAt = await auditsCreatedAt(trx, auditIds);
      // An older audit finishing late counts its sighting but does not roll the finding back
      // to what an older commit showed (nor reopen what a newer audit resolved).
      const notAfter = (auditId: string | null) => {
        const t = auditId ? createdAt.get(auditId)?.getTime() : undefined;
        return t === undefined || t <= audit.created_at.getTime();
      };
      const changes: Sighting[] = [];
      const reopenedRows: FindingRow[] = [];
      for (const x of seenBefore) {
        const before = byFingerprint.get(x.finding.fingerprint);
        if (!before) throw new Error(`finding ${x.finding.fingerprint} neither inserted nor found`);
        x.id = before.id;
        const reopen = before.status === 'resolved' && notAfter(before.resolved_audit_id);
        changes.push({
          id: before.id,
          seen: notAfter(before.last_seen_audit_id) ? fieldsOf(x) : null,
          reopen,
        });
        if (reopen) reopenedRows.push(before);
      }
      await recordSightings(trx, audit.id, now, changes);
      reopened = reopenedRows.length;
      await systemWrites(trx, audit, reopenedRows, 'finding.reopened', 'resolved', 'open');
    }
    observed = ordered.length;
    // What this audit observed of each finding, as it was: its report reads these, whatever
    // later audits observe.
    await linkAuditFindings(
      trx,
      audit,
      ordered.map((x) => {
        const f = fieldsOf(x);
        return {
          finding_id: x.id,
          severity: f.severity,
          title: f.title,
          detail: f.detail,
          entity_key: f.entity_key,
          evidence_ids: f.evidence_ids,
          locations: f.locations,
        };
      }),
    );

    // Exceptions in force as the audit is assessed: a covered assessment keeps its status and
    // names the exception (the gate does not count it as a new failure).
    const exceptions = await exceptionsForAudit(trx, audit.workspace_id, audit.repository_id, now);
    const assessmentRows: NewAssessment[] = [];
    for (const [position, a] of artifact.assessments.entries()) {
      const control = catalog.get(a.control_key);
      if (!control) continue;
      const findingIds = a.findings.map((f) => sightings.get(f.fingerprint)!.id);
      const exception = coveringException(
        {
          control_key: a.control_key,
          subject_keys: [
            ...a.findings.map((f) => f.entity_key).filter((k): k is string => !!k),
            ...a.architecture_relationship_ids,
          ],
        },
        audit.repository_id,
        exceptions.active,
        now,
      );
      assessmentRows.push({
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
        evidence_ids: a.evidence_ids,
        finding_ids: findingIds,
        architecture_relationship_ids: a.architecture_relationship_ids,
        stale_evidence_ids: [...new Set([...a.stale_evidence_ids, ...staleOf(a)])].sort(),
        conflicting_evidence_ids: a.conflicting_evidence_ids,
        missing_requirement_keys: a.missing_requirement_keys,
        exception_id: exception?.id ?? null,
        requirements: a.requirements,
        overlay_version: exceptions.overlayVersion,
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
    await insertAssessments(trx, assessmentRows);
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
 * Called as a completed audit is finished, in the transaction that completes it: the status of
 * each finding it observed is recorded with its observations (its report shows them as they were
 * then); open findings of its repository that it did not observe are resolved, unless the user
 * set them accepted_risk/false_positive, the audit looked at (or read) part of the source only,
 * or a newer audit (by creation) saw the finding last. A bounded number of statements per 1,000
 * findings, whatever the count; all in the caller's transaction (a retry finds the audit ended
 * and runs none of it again).
 */
export async function settleFindings(trx: Knex, auditId: string): Promise<number> {
  const audit = await getAuditById(trx, auditId);
  if ((await assessmentCount(trx, auditId)) === 0) return 0;
  await settleObservations(trx, auditId);
  if (!coversWholeSource(audit)) return 0;
  if (!readWholeSource(audit)) {
    await appendLog(trx, auditId, {
      level: 'info',
      source: 'control',
      message:
        'findings not observed were left open: files of the source were not read (see coverage gaps)',
    });
    return 0;
  }
  const resolved: ResolvedFinding[] = await resolveUnobserved(trx, audit, scopeKeyOf(audit));
  await systemWrites(trx, audit, resolved, 'finding.resolved', 'open', 'resolved');
  if (resolved.length)
    await appendLog(trx, auditId, {
      level: 'info',
      source: 'control',
      message: `${resolved.length} finding(s) no longer observed: resolved`,
      details: {
        count: resolved.length,
        finding_ids: resolved.slice(0, LISTED_IDS).map((f) => f.id),
      },
    });
  return resolved.length;
}
