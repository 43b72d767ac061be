/**
 * Every resource schema of spec section 2, the types section 2.15 leaves open (shaped per
 * DESIGN.md section 5), the token scopes and the enum value tuples.
 *
 * `SPEC_SCHEMAS` lists every named schema (marked with `x-name`) defined here, so the OpenAPI
 * builder can include them all as components even before an operation uses them.
 */
import type { TSchema } from '@sinclair/typebox';
import { NAME_KEYWORD } from '../common';
import * as agents from './agents';
import * as architecture from './architecture';
import * as assistant from './assistant';
import * as attachments from './attachments';
import * as audits from './audits';
import * as changes from './changes';
import * as comparisons from './comparisons';
import * as controls from './controls';
import * as decisions from './decisions';
import * as gaps from './gaps';
import * as generic from './generic';
import * as profiles from './profiles';
import * as schedules from './schedules';
import * as tokens from './tokens';
import * as uncertainty from './uncertainty';

export * from './enums';
export * from './gaps';
export * from './generic';
export * from './agents';
export * from './tokens';
export * from './architecture';
export * from './changes';
export * from './decisions';
export * from './uncertainty';
export * from './controls';
export * from './assistant';
export * from './attachments';
export * from './audits';
export * from './comparisons';
export * from './profiles';
export * from './schedules';

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
