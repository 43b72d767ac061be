/** Audit schedules: the specification's schemas and the parameters of our operations. */
import { Type } from '@sinclair/typebox';
import { MISSED_RUN_POLICIES, SCHEDULE_CADENCES } from '../../domain/contract/values';
import {
  DateOnly,
  DateTime,
  LiteralUnion,
  Nullable,
  Strict,
  Uuid,
  pageFields,
  Version,
} from '../schema-kit';
import { CursorPage, ResourceParams } from '../schema-parts';

const timezone = () =>
  Type.String({ minLength: 1, maxLength: 100, description: 'IANA time zone, e.g. Europe/Paris.' });
const cadence = () => LiteralUnion(SCHEDULE_CADENCES, { description: 'How often audits run.' });
const localHour = () => Type.Integer({ minimum: 0, maximum: 23, description: 'Local hour.' });
const localMinute = () => Type.Integer({ minimum: 0, maximum: 59, description: 'Local minute.' });
const anchorDate = () =>
  Type.Optional(Nullable(DateOnly({ description: 'Start of the biweekly rhythm.' })));
const dayOfMonth = () =>
  Type.Optional(
    Nullable(Type.Integer({ minimum: 1, maximum: 31, description: 'Day of month (monthly).' })),
  );
const weekday = () =>
  Type.Optional(
    Nullable(
      Type.Integer({
        minimum: 0,
        maximum: 6,
        description: 'Weekday, 0 = Sunday (weekly, biweekly).',
      }),
    ),
  );

export const AuditScheduleCreate = Strict(
  'AuditScheduleCreate',
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    repository_id: Uuid(),
    timezone: timezone(),
    cadence: cadence(),
    local_hour: localHour(),
    local_minute: localMinute(),
    anchor_date: anchorDate(),
    branch_ref: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    day_of_month: dayOfMonth(),
    weekday: weekday(),
    missed_run_policy: Type.Optional(
      LiteralUnion(MISSED_RUN_POLICIES, {
        default: 'skip',
        description: 'What to do with runs missed while nothing could run.',
      }),
    ),
  },
  { description: 'Request to create an audit schedule.' },
);

export const AuditSchedulePreviewRequest = Strict(
  'AuditSchedulePreviewRequest',
  {
    timezone: timezone(),
    cadence: cadence(),
    local_hour: localHour(),
    local_minute: localMinute(),
    anchor_date: anchorDate(),
    count: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 20, default: 5, description: 'Runs to list.' }),
    ),
    day_of_month: dayOfMonth(),
    weekday: weekday(),
  },
  { description: 'Request to list the next runs of a schedule definition.' },
);

export const AuditSchedulePreviewResponse = Strict(
  'AuditSchedulePreviewResponse',
  { timezone: Type.String(), runs: Type.Array(DateTime(), { description: 'Next run times.' }) },
  { description: 'The next runs of a schedule definition.' },
);

export const AuditScheduleResponse = Strict(
  'AuditScheduleResponse',
  {
    anchor_date: Nullable(DateOnly()),
    branch_ref: Nullable(Type.String()),
    cadence: Type.String({ description: 'One of daily, weekly, biweekly, monthly.' }),
    created_at: DateTime(),
    day_of_month: Nullable(Type.Integer()),
    id: Uuid(),
    last_dispatched_at: Nullable(DateTime()),
    last_run_at: Nullable(DateTime()),
    last_error_code: Nullable(Type.String()),
    local_hour: Type.Integer(),
    local_minute: Type.Integer(),
    missed_run_policy: Type.String({ description: 'One of skip, run_once.' }),
    name: Type.String(),
    next_run_at: DateTime(),
    owner_id: Uuid(),
    repository_id: Uuid(),
    state: Type.String({ description: 'One of active, paused, error.' }),
    scheduler_schedule_id: Type.String({ description: 'Id of the schedule in the scheduler.' }),
    timezone: Type.String(),
    updated_at: DateTime(),
    version: Version({ description: 'Revision counter.' }),
    weekday: Nullable(Type.Integer()),
    workspace_id: Uuid(),
  },
  { description: 'An audit schedule.' },
);

export const AuditSchedulePage = CursorPage('AuditSchedulePage', AuditScheduleResponse);

export const ScheduleParams = ResourceParams('schedule_id', 'The audit schedule.');

export const ScheduleListQuery = Type.Object(
  {
    repository_id: Type.Optional(Uuid({ description: 'Only schedules of this repository.' })),
    ...pageFields(),
  },
  { additionalProperties: false },
);

const createFields = AuditScheduleCreate.properties;

/** A change to a schedule: any create field, with the version the client last read. */
export const AuditScheduleUpdate = Strict(
  'AuditScheduleUpdate',
  {
    expected_version: Version({
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
