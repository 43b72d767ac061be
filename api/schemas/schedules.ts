/** Our schemas around audit schedules (the spec's own schedule schemas live in spec/). */
import { Type, type Static } from '@sinclair/typebox';
import { Strict, Uuid, pageFields } from '../schema-kit';
import { AuditScheduleCreate, LiteralUnion, MISSED_RUN_POLICIES } from '../schemas';

export const ScheduleParams = Type.Object(
  {
    workspace_id: Uuid({ description: 'The workspace.' }),
    schedule_id: Uuid({ description: 'The audit schedule.' }),
  },
  { additionalProperties: false },
);

export const ScheduleListQuery = Type.Object(
  {
    repository_id: Type.Optional(Uuid({ description: 'Only schedules of this repository.' })),
    ...pageFields(),
  },
  { additionalProperties: false },
);
export type ScheduleListQuery = Static<typeof ScheduleListQuery>;

const createFields = AuditScheduleCreate.properties;

/** A change to a schedule: any create field, with the version the client last read. */
export const AuditScheduleUpdate = Strict(
  'AuditScheduleUpdate',
  {
    expected_version: Type.Integer({
      minimum: 1,
      description: 'The `version` the client last read; a stale one is 409 version_mismatch.',
    }),
    name: Type.Optional(createFields.name),
    repository_id: Type.Optional(createFields.repository_id),
    timezone: Type.Optional(createFields.timezone),
    cadence: Type.Optional(createFields.cadence),
    local_hour: Type.Optional(createFields.local_hour),
    local_minute: Type.Optional(createFields.local_minute),
    anchor_date: createFields.anchor_date,
    branch_ref: createFields.branch_ref,
    day_of_month: createFields.day_of_month,
    weekday: createFields.weekday,
    // No default here: with useDefaults an omitted field would otherwise be reset to `skip`.
    missed_run_policy: Type.Optional(
      LiteralUnion(MISSED_RUN_POLICIES, {
        description: 'What to do with runs missed while nothing could run.',
      }),
    ),
  },
  {
    description:
      'Changes to an audit schedule. Omitted fields keep their value; null clears a nullable one. The result must satisfy the same calendar rules as AuditScheduleCreate.',
  },
);
export type AuditScheduleUpdate = Static<typeof AuditScheduleUpdate>;
