/**
 * GitHub and GitLab integrations: one per repository (its secrets sealed with
 * INTEGRATION_SECRET_KEYS, never stored in clear), the webhook deliveries it received (a replayed
 * delivery id answers what the first did), its pull requests (the one comment kept per pull
 * request) and what each audit it started publishes back.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('repository_integrations', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('repository_id')
      .notNullable()
      .unique()
      .references('repositories.id')
      .onDelete('CASCADE');
    t.text('provider').notNullable();
    t.text('api_base_url').notNullable();
    t.text('project').notNullable();
    t.jsonb('fail_on').notNullable();
    t.text('token_sealed').notNullable();
    t.text('token_last4').notNullable();
    t.text('webhook_secret_sealed').notNullable();
    t.uuid('created_by').references('members.id').onDelete('SET NULL');
    t.integer('version').notNullable().defaultTo(1);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id']);
  });
  await knex.schema.createTable('integration_deliveries', (t) => {
    t.uuid('integration_id')
      .notNullable()
      .references('repository_integrations.id')
      .onDelete('CASCADE');
    t.text('delivery_id').notNullable();
    t.text('event').notNullable();
    t.text('outcome').notNullable();
    t.uuid('audit_id');
    t.jsonb('response').notNullable();
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['integration_id', 'delivery_id']);
    t.index(['integration_id', 'received_at']);
  });
  await knex.schema.createTable('integration_reviews', (t) => {
    t.uuid('integration_id')
      .notNullable()
      .references('repository_integrations.id')
      .onDelete('CASCADE');
    t.integer('number').notNullable();
    t.text('state').notNullable();
    t.text('head_sha');
    t.text('comment_id');
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['integration_id', 'number']);
  });
  await knex.schema.createTable('integration_publications', (t) => {
    t.uuid('audit_id').primary().references('audits.id').onDelete('CASCADE');
    t.uuid('integration_id')
      .notNullable()
      .references('repository_integrations.id')
      .onDelete('CASCADE');
    t.integer('number');
    t.text('commit_sha').notNullable();
    t.text('state').notNullable().defaultTo('waiting');
    t.text('status_state');
    t.text('last_error');
    t.integer('attempts').notNullable().defaultTo(0);
    t.timestamp('published_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['integration_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('integration_publications');
  await knex.schema.dropTableIfExists('integration_reviews');
  await knex.schema.dropTableIfExists('integration_deliveries');
  await knex.schema.dropTableIfExists('repository_integrations');
}
