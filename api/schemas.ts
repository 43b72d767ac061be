/**
 * Every resource schema of spec section 2, the types section 2.15 leaves open (shaped per
 * DESIGN.md section 5), the token scopes and the enum value tuples.
 *
 * `SPEC_SCHEMAS` lists every named schema (marked with `x-name`) defined here, so the OpenAPI
 * builder can include them all as components even before an operation uses them.
 */
import type { TSchema } from '@sinclair/typebox';
import { NAME_KEYWORD } from './schema-kit';
import * as agents from './schemas/spec/agents';
import * as architecture from './architecture/schemas';
import * as assistant from './assistant/schemas';
import * as attachments from './attachments/schemas';
import * as audits from './audits/schemas';
import * as changes from './changes/schemas';
import * as comparisons from './comparisons/schemas';
import * as controls from './controls/schemas';
import * as decisions from './decisions/schemas';
import * as gaps from './schemas/spec/gaps';
import * as generic from './activity/schemas';
import * as profiles from './profiles/schemas';
import * as schedules from './schedules/schemas';
import * as tokens from './tokens/schemas';
import * as uncertainty from './uncertainty/schemas';

export * from '../domain/contract/values';
export * from './schemas/spec/gaps';
export * from './activity/schemas';
export * from './schemas/spec/agents';
export * from './tokens/schemas';
export * from './architecture/schemas';
export * from './changes/schemas';
export * from './decisions/schemas';
export * from './uncertainty/schemas';
export * from './controls/schemas';
export * from './assistant/schemas';
export * from './attachments/schemas';
export * from './audits/schemas';
export * from './comparisons/schemas';
export * from './profiles/schemas';
export * from './schedules/schemas';

const MODULES = [
  generic,
  agents,
  tokens,
  architecture,
  changes,
  decisions,
  uncertainty,
  controls,
  assistant,
  attachments,
  audits,
  comparisons,
  profiles,
  schedules,
  gaps,
];

function isNamedSchema(value: unknown): value is TSchema & { [NAME_KEYWORD]: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Record<string, unknown>)[NAME_KEYWORD] === 'string'
  );
}

/** All named spec schemas, in module order (spec subsections, then the gap types). */
export const SPEC_SCHEMAS: readonly TSchema[] = MODULES.flatMap((module) =>
  Object.values(module).filter(isNamedSchema),
);

/** Name of a named schema (its `x-name`). */
export function schemaName(schema: TSchema): string | undefined {
  const name = (schema as Record<string, unknown>)[NAME_KEYWORD];
  return typeof name === 'string' ? name : undefined;
}
