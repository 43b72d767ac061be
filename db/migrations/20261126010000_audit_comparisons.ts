/** Audit comparisons: a stored, content-addressed comparison of two audits of one repository. */
import type { Knex } from 'knex';

const NOW = "date_trunc('milliseconds', now())";

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('audit_comparisons', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('repository_id').notNullable().references('repositories.id').onDelete('CASCADE');
    t.uuid('baseline_audit_id').notNullable().references('audits.id').onDelete('CASCADE');
    t.uuid('candidate_audit_id').notNullable().references('audits.id').onDelete('CASCADE');
    t.text('content_sha256').notNullable();
    t.boolean('coverage_comparable').notNullable();
    t.jsonb('counts').notNullable();
    t.jsonb('result').notNullable();
    t.uuid('created_by').references('members.id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    t.index(['workspace_id', 'created_at', 'id']);
    t.index(['workspace_id', 'repository_id', 'created_at', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('audit_comparisons');
}
