/** Our own schemas for the uncertainty operations (the case shapes are the spec's, spec/uncertainty.ts). */
import { Type, type Static } from '@sinclair/typebox';
import { Uuid, pageFields } from '../schema-kit';
import { UNCERTAINTY_STATES, LiteralUnion } from '../../domain/contract/values';

export const UncertaintyCaseListQuery = Type.Object(
  {
    state: Type.Optional(
      LiteralUnion(UNCERTAINTY_STATES, { description: 'Only cases in this state.' }),
    ),
    repository_id: Type.Optional(Uuid({ description: 'Only cases about this repository.' })),
    blocking: Type.Optional(
      Type.Boolean({ description: 'Only blocking (true) or only non-blocking (false) cases.' }),
    ),
    ...pageFields(
      'The cursor of the `Link: <...>; rel="next"` header of the previous page (the page schema has no next_cursor field).',
    ),
  },
  { additionalProperties: false },
);
export type UncertaintyCaseListQuery = Static<typeof UncertaintyCaseListQuery>;

export const UncertaintyCaseParams = Type.Object(
  {
    workspace_id: Uuid({ description: 'The workspace.' }),
    case_id: Uuid({ description: 'The uncertainty case.' }),
  },
  { additionalProperties: false },
);
