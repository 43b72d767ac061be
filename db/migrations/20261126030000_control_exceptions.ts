/** Control exceptions: a time-bound, revocable waiver of one control for a scope. */
import type { Knex } from 'knex';

const NOW = "date_trunc('milliseconds', now())";

export async function up(knex: Knex): Promise<void> {
  const ts = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true });
  await knex.schema.createTable('control_exceptions', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('control_key').notNullable();
    // workspace, repository, or one entity/relationship key of a repository.
    t.text('scope').notNullable();
    t.uuid('repository_id').references('repositories.id').onDelete('CASCADE');
    t.text('subject_key');
    t.text('reason').notNullable();
    ts(t, 'expires_at').notNullable();
    t.uuid('created_by').notNullable().references('members.id');
    ts(t, 'created_at').notNullable().defaultTo(knex.raw(NOW));
    ts(t, 'revoked_at');
    t.uuid('revoked_by').references('members.id');
    t.index(['workspace_id', 'created_at', 'id']);
    t.index(['workspace_id', 'control_key']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('control_exceptions');
}
