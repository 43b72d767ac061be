/**
 * What each audit observed of each finding, as it was then (issue 26): audit_findings, the link
 * "this audit observed this finding", gains the finding's severity, title, detail, entity,
 * evidence ids and locations as this audit's controls stage produced them, and `status` as it
 * stood when the audit completed (null until then). A finding row follows its newest sighting
 * and its latest resolution, so a report read from the finding rows changed when a later audit
 * re-observed or resolved a finding; the report now reads these columns (db/reports.ts).
 *
 * Backfilled from the finding rows as they stand (all that is known of earlier observations):
 * exact for the audit that saw each finding last, the finding's current fields for earlier ones.
 * From here on, what later audits observe no longer changes any audit's report.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('audit_findings', (t) => {
    t.text('severity');
    t.text('title');
    t.text('detail');
    t.text('entity_key');
    t.jsonb('evidence_ids');
    t.jsonb('locations');
    t.text('status');
  });
  await knex.raw(`
    UPDATE audit_findings af SET
      severity = f.severity, title = f.title, detail = f.detail, entity_key = f.entity_key,
      evidence_ids = f.evidence_ids, locations = f.locations,
      status = CASE
        WHEN a.status <> 'completed' THEN NULL
        WHEN f.status = 'resolved' AND f.resolved_audit_id IS NOT NULL THEN 'open'
        ELSE f.status END
      FROM findings f, audits a
     WHERE f.id = af.finding_id AND a.id = af.audit_id`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('audit_findings', (t) => {
    for (const c of ['severity', 'title', 'detail', 'entity_key', 'evidence_ids', 'locations'])
      t.dropColumn(c);
    t.dropColumn('status');
  });
}
