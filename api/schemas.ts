/**
 * Every named schema of the contract, gathered from the feature folders (api/<feature>/schemas.ts)
 * and the shared kit, so the OpenAPI document lists them all as components even before an
 * operation uses them (the specification's schemas, the types it leaves open, and ours).
 */
import type { TSchema } from '@sinclair/typebox';
import * as activity from './activity/schemas';
import * as architecture from './architecture/schemas';
import * as assistant from './assistant/schemas';
import * as attachments from './attachments/schemas';
import * as audits from './audits/schemas';
import * as changes from './changes/schemas';
import * as comparisons from './comparisons/schemas';
import * as controls from './controls/schemas';
import * as decisions from './decisions/schemas';
import * as meta from './meta/schemas';
import * as profiles from './profiles/schemas';
import * as repositories from './repositories/schemas';
import * as schedules from './schedules/schemas';
import * as kit from './schema-kit';
import { NAME_KEYWORD } from './schema-kit';
import * as tokens from './tokens/schemas';
import * as uncertainty from './uncertainty/schemas';
import * as uploads from './uploads/schemas';
import * as workspaces from './workspaces/schemas';

const MODULES = [
  kit,
  activity,
  meta,
  workspaces,
  tokens,
  repositories,
  audits,
  uploads,
  architecture,
  changes,
  decisions,
  uncertainty,
  controls,
  assistant,
  attachments,
  comparisons,
  profiles,
  schedules,
];

function isNamedSchema(value: unknown): value is TSchema & { [NAME_KEYWORD]: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Record<string, unknown>)[NAME_KEYWORD] === 'string'
  );
}

/** All named schemas of the contract, in feature order, each once. */
export const CONTRACT_SCHEMAS: readonly TSchema[] = [
  ...new Set(MODULES.flatMap((module) => Object.values(module).filter(isNamedSchema))),
];

/** Name of a named schema (its `x-name`). */
export function schemaName(schema: TSchema): string | undefined {
  const name = (schema as Record<string, unknown>)[NAME_KEYWORD];
  return typeof name === 'string' ? name : undefined;
}
