/** The contract, scopes and health. */
import { Type } from '@sinclair/typebox';
import { Strict } from '../schema-kit';
import { Scope } from '../tokens/schemas';

// Meta ---------------------------------------------------------------------------------------

export const ScopeDescription = Strict('ScopeDescription', {
  name: Scope,
  description: Type.String(),
});

export const ScopeList = Strict('ScopeList', {
  items: Type.Array(ScopeDescription, { minItems: 25, maxItems: 25 }),
});

const Up = Type.Union([Type.Literal('ok'), Type.Literal('down')]);
export const Health = Strict('Health', {
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')], {
    description:
      'ok when every dependency answers; degraded when Temporal is down (reads still work).',
  }),
  db: Up,
  temporal: Up,
  version: Type.String(),
});
