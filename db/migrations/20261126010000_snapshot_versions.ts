/**
 * Snapshot versions unique per repository. Versions were "count + 1" without a lock, so
 * concurrent audits of one repository could share one: each repository's snapshots are first
 * renumbered 1..n in (version, generated_at, id) order (snapshots already unique keep their
 * order; only rows whose number changes are written), then the unique index is added. Upload
 * audits' snapshots (no repository) each stand alone at version 1 and are not covered.
 */
import type { Knex } from 'knex';

const INDEX = 'architecture_snapshots_repository_version_unique';

export async function up(knex: Knex): Promise<void> {
  // Snapshots are immutable (a trigger refuses updates); this one correction is the exception.
  await knex.raw(
    'ALTER TABLE architecture_snapshots DISABLE TRIGGER architecture_snapshots_immutable',
  );
  await knex.raw(`
    WITH numbered AS (
      SELECT id, row_number() OVER (
               PARTITION BY repository_id
               ORDER BY CASE WHEN version ~ '^[0-9]{1,9}$' THEN version::integer END NULLS LAST,
                        generated_at, id
             )::text AS renumbered
        FROM architecture_snapshots
       WHERE repository_id IS NOT NULL
    )
    UPDATE architecture_snapshots s
       SET version = n.renumbered
      FROM numbered n
     WHERE s.id = n.id AND s.version IS DISTINCT FROM n.renumbered`);
  await knex.raw(
    'ALTER TABLE architecture_snapshots ENABLE TRIGGER architecture_snapshots_immutable',
  );
  await knex.raw(
    `CREATE UNIQUE INDEX ${INDEX} ON architecture_snapshots (repository_id, version)
      WHERE repository_id IS NOT NULL`,
  );
}

/** Drops the index; the renumbering stays (the old numbers were the defect). */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX IF EXISTS ${INDEX}`);
}
