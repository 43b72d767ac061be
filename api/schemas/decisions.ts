/** Our schemas around decisions (path and query parameters); the spec's own are in spec/. */
import { Type } from '@sinclair/typebox';
import { Uuid } from './common';
import { DECISION_STATES, LiteralUnion } from './spec';

export const DecisionParams = Type.Object(
  {
    workspace_id: Uuid({ description: 'The workspace.' }),
    decision_id: Uuid({ description: 'The decision.' }),
  },
  { additionalProperties: false },
);

export const DecisionListQuery = Type.Object(
  {
    status: Type.Optional(
      LiteralUnion(DECISION_STATES, { description: 'Only decisions in this state.' }),
    ),
    repository_id: Type.Optional(Uuid({ description: 'Only decisions about this repository.' })),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Items per page.' }),
    ),
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 500,
        description: 'The next_cursor of the previous page.',
      }),
    ),
  },
  { additionalProperties: false },
);
