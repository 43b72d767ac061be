/**
 * Pull requests gated end to end (issue 25, the rest): the pull request's target branch each
 * audit is gated against, audits a newer head or the pull request's closing withdrew (their
 * publication says so instead of a verdict), GitHub check runs (the integration's `publish_as`,
 * the check run's id and how many annotations it carries), and observed change sets closed when
 * their pull request closes.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('repository_integrations', (t) => {
    t.text('publish_as').notNullable().defaultTo('commit_status');
  });
  await knex.schema.alterTable('integration_publications', (t) => {
    t.text('base_ref');
    t.text('withdrawn_reason');
    t.text('check_run_id');
    t.integer('check_annotations_sent').notNullable().defaultTo(0);
  });
  await knex.schema.alterTable('integration_reviews', (t) => {
    t.text('base_ref');
    t.text('closed_reason');
  });
  await knex.schema.alterTable('change_sets', (t) => {
    t.timestamp('closed_at', { useTz: true });
    t.text('closed_reason');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('change_sets', (t) => {
    t.dropColumn('closed_reason');
    t.dropColumn('closed_at');
  });
  await knex.schema.alterTable('integration_reviews', (t) => {
    t.dropColumn('closed_reason');
    t.dropColumn('base_ref');
  });
  await knex.schema.alterTable('integration_publications', (t) => {
    t.dropColumn('check_annotations_sent');
    t.dropColumn('check_run_id');
    t.dropColumn('withdrawn_reason');
    t.dropColumn('base_ref');
  });
  await knex.schema.alterTable('repository_integrations', (t) => {
    t.dropColumn('publish_as');
  });
}
