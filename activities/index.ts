/** Activity implementations, built from their dependencies (`createActivities(deps)`). */
import type { Knex } from 'knex';
import type { Logger } from '../platform/logger';

export interface ActivityDeps {
  db: Knex;
  log: Logger;
}

export function createActivities(_deps: ActivityDeps) {
  return {};
}

export type Activities = ReturnType<typeof createActivities>;
