/**
 * Member sessions (the customer session) and the OAuth authorization server behind the MCP
 * gateway: password credentials per login, session rows, oidc-provider's artifacts (one table,
 * one row per model instance), the grants members gave to MCP clients, and the generated keys.
 */
import type { Knex } from 'knex';

const NOW = "date_trunc('milliseconds', now())";

export async function up(knex: Knex): Promise<void> {
  // A person signs in once with a login; their memberships are the members rows with that login.
  await knex.schema.createTable('member_credentials', (t) => {
    t.text('login').primary();
    t.text('password_hash').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
  });

  await knex.schema.createTable('member_sessions', (t) => {
    t.uuid('id').primary();
    // SHA-256 of the cookie's secret: a database read does not give a usable cookie.
    t.text('secret_sha256').notNullable().unique();
    t.text('login').notNullable();
    t.text('ip');
    t.text('user_agent');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('signed_out_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    t.index(['login', 'created_at']);
    t.index(['expires_at']);
  });

  await knex.schema.createTable('oauth_models', (t) => {
    t.text('model').notNullable();
    t.text('id').notNullable();
    t.jsonb('payload').notNullable();
    t.timestamp('expires_at', { useTz: true });
    t.text('grant_id');
    t.text('uid');
    t.text('user_code');
    t.timestamp('consumed_at', { useTz: true });
    t.primary(['model', 'id']);
    t.index(['grant_id']);
    t.index(['model', 'uid']);
    t.index(['model', 'user_code']);
    t.index(['expires_at']);
  });

  await knex.schema.createTable('oauth_grants', (t) => {
    t.text('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('member_id').notNullable().references('members.id').onDelete('CASCADE');
    t.text('client_id').notNullable();
    t.text('client_name');
    t.text('redirect_host').notNullable();
    t.text('resource').notNullable();
    t.specificType('scopes', 'text[]').notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('revoked_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    t.index(['workspace_id', 'member_id', 'created_at', 'id']);
  });

  // Signing keys and cookie keys, made on first start (never in code or in the repository).
  await knex.schema.createTable('oauth_keys', (t) => {
    t.text('kind').primary();
    t.jsonb('value').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'oauth_keys',
    'oauth_grants',
    'oauth_models',
    'member_sessions',
    'member_credentials',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
