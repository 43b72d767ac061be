/**
 * Token lineage: revoking a token revokes the tokens it minted, found through
 * created_by_token_id (a column since the platform migration); this index makes that walk cheap.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_tokens', (t) => {
    t.index(['created_by_token_id'], 'api_tokens_created_by_token_id_index');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_tokens', (t) => {
    t.dropIndex(['created_by_token_id'], 'api_tokens_created_by_token_id_index');
  });
}
