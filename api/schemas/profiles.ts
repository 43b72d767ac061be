/** Our schemas around audit profiles (the spec's AuditProfile* schemas live in spec/). */
import { Type } from '@sinclair/typebox';
import { Uuid } from '../schema-kit';

export const AuditProfileParams = Type.Object(
  {
    workspace_id: Uuid({ description: 'The workspace.' }),
    profile_id: Uuid({ description: 'The audit profile.' }),
  },
  { additionalProperties: false },
);
