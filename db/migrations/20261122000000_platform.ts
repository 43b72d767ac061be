/** Platform tables: workspaces, members, API tokens, repositories, audit events, activity feed. */
import type { Knex } from 'knex';

// Millisecond precision: timestamps round-trip exactly through JS Dates and pagination cursors.
const NOW = "date_trunc('milliseconds', now())";

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('workspaces', (t) => {
    t.uuid('id').primary();
    t.text('name').notNullable();
    t.text('slug').notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    t.index(['created_at', 'id']);
  });

  await knex.schema.createTable('members', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('login').notNullable();
    t.text('display_name');
    t.text('role').notNullable().defaultTo('member');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    t.unique(['workspace_id', 'login']);
    t.index(['workspace_id', 'created_at', 'id']);
  });

  await knex.schema.createTable('api_tokens', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('member_id').notNullable().references('members.id').onDelete('CASCADE');
    t.uuid('created_by_token_id').references('api_tokens.id').onDelete('SET NULL');
    t.text('name').notNullable();
    t.text('prefix').notNullable().unique();
    t.text('secret_sha256').notNullable();
    t.specificType('scopes', 'text[]').notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('last_used_at', { useTz: true });
    t.timestamp('revoked_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    t.index(['workspace_id', 'created_at', 'id']);
  });

  await knex.schema.createTable('repositories', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('url').notNullable();
    t.text('default_branch').notNullable();
    t.text('description');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    // Soft delete: audits and snapshots keep pointing at a deleted repository's row.
    t.timestamp('deleted_at', { useTz: true });
    t.index(['workspace_id', 'created_at', 'id']);
  });
  await knex.raw(
    'CREATE UNIQUE INDEX repositories_workspace_name_live ON repositories (workspace_id, lower(name)) WHERE deleted_at IS NULL',
  );

  await knex.schema.createTable('audit_events', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('actor_id').references('members.id').onDelete('SET NULL');
    t.uuid('token_id').references('api_tokens.id').onDelete('SET NULL');
    t.text('action').notNullable();
    t.text('resource_type').notNullable();
    t.uuid('resource_id');
    t.jsonb('details').notNullable().defaultTo('{}');
    t.text('request_id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    t.index(['workspace_id', 'created_at', 'id']);
  });

  await knex.schema.createTable('activity_feed', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').references('workspaces.id').onDelete('CASCADE');
    t.text('actor_login');
    t.text('action').notNullable();
    t.text('resource_type').notNullable();
    t.uuid('resource_id');
    t.jsonb('details').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    t.index(['workspace_id', 'created_at', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'activity_feed',
    'audit_events',
    'repositories',
    'api_tokens',
    'members',
    'workspaces',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
