/** Our schemas around decisions (path and query parameters); the spec's own are in spec/. */
import { Type } from '@sinclair/typebox';
import { Uuid, pageFields } from '../schema-kit';
import { DECISION_STATES, LiteralUnion } from '../schemas';

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
    ...pageFields(
      'The cursor of the `Link: <...>; rel="next"` header of the previous page (the page schema has no next_cursor field).',
    ),
  },
  { additionalProperties: false },
);
