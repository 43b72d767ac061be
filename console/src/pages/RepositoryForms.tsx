/**
 * The repository page's forms: a new audit profile, a new schedule (its calendar, time zone and
 * what happens to missed runs, as createAuditSchedule takes them) and a schedule's edit (pause or
 * resume, a new calendar). The API's problems show under the field they name.
 */
import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../api/client';
import { pageKeys } from '../api/pages';
import { Field, FormCard, Problem, TextField } from '../components';

type Schedule = Schemas['AuditScheduleResponse'];
type Calendar = Pick<
  Schemas['AuditScheduleCreate'],
  | 'timezone'
  | 'cadence'
  | 'local_hour'
  | 'local_minute'
  | 'weekday'
  | 'day_of_month'
  | 'missed_run_policy'
>;
type Cadence = Calendar['cadence'];
type MissedRuns = NonNullable<Calendar['missed_run_policy']>;

/** Every cadence and missed-run policy the contract offers, in the order a person reads them. */
const CADENCES: Record<Cadence, string> = {
  daily: 'every day',
  weekly: 'every week',
  biweekly: 'every two weeks',
  monthly: 'every month',
};
const MISSED: Record<MissedRuns, string> = {
  skip: 'skip them',
  run_once: 'run once when possible',
};
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

const patterns = (text: string) =>
  text
    .split(/[\n,]/)
    .map((p) => p.trim())
    .filter(Boolean);

/** Creates an audit profile of the repository (a branch, a purpose, the paths it reads). */
export function ProfileForm({ ws, repository }: { ws: string; repository: string }) {
  const client = useQueryClient();
  const [name, setName] = useState('');
  const [branch, setBranch] = useState('');
  const [purpose, setPurpose] = useState('');
  const [include, setInclude] = useState('');
  const [exclude, setExclude] = useState('');
  const create = useMutation({
    mutationFn: async () => {
      const scope = { include: patterns(include), exclude: patterns(exclude) };
      return unwrap(
        await api.POST(
          '/v1/workspaces/{workspace_id}/repositories/{repository_id}/audit-profiles',
          {
            params: { path: { workspace_id: ws, repository_id: repository } },
            body: {
              name: name.trim(),
              branch_ref: branch.trim(),
              purpose: purpose.trim(),
              ...(scope.include.length || scope.exclude.length ? { source_scope: scope } : {}),
            },
          },
        ),
      );
    },
    onSuccess: () => {
      setName('');
      setBranch('');
      setPurpose('');
      setInclude('');
      setExclude('');
      void client.invalidateQueries({ queryKey: pageKeys.profiles(ws, repository) });
    },
  });
  const err = create.error;
  return (
    <FormCard
      title="New profile"
      submit="Create the profile"
      action={create}
      done={create.isSuccess ? `Profile ${create.data.name} created.` : null}
    >
      <TextField
        id="p-name"
        label="Name"
        error={err}
        path="/name"
        value={name}
        onChange={setName}
      />
      <TextField
        id="p-branch"
        label="Branch"
        error={err}
        path="/branch_ref"
        value={branch}
        onChange={setBranch}
      />
      <TextField
        id="p-purpose"
        label="Purpose (optional)"
        error={err}
        path="/purpose"
        value={purpose}
        onChange={setPurpose}
      />
      <TextField
        id="p-include"
        label="Include paths (globs, comma-separated; default everything)"
        error={err}
        path="/source_scope/include"
        value={include}
        onChange={setInclude}
      />
      <TextField
        id="p-exclude"
        label="Exclude paths (globs, comma-separated)"
        error={err}
        path="/source_scope/exclude"
        value={exclude}
        onChange={setExclude}
      />
    </FormCard>
  );
}

/** The calendar fields of a schedule (create and edit share them). */
function CalendarFields({
  prefix,
  value,
  onChange,
  error,
}: {
  prefix: string;
  value: Calendar;
  onChange: (next: Calendar) => void;
  error: unknown;
}) {
  const set = (patch: Partial<Calendar>) => onChange({ ...value, ...patch });
  const time = `${String(value.local_hour).padStart(2, '0')}:${String(value.local_minute).padStart(2, '0')}`;
  const usesWeekday = value.cadence === 'weekly' || value.cadence === 'biweekly';
  return (
    <>
      <Field id={`${prefix}-cadence`} label="Runs" error={error} path="/cadence">
        {(c) => (
          <select
            {...c}
            value={value.cadence}
            onChange={(e) => {
              const cadence = e.target.value as Cadence;
              set({
                cadence,
                weekday:
                  cadence === 'weekly' || cadence === 'biweekly' ? (value.weekday ?? 1) : null,
                day_of_month: cadence === 'monthly' ? (value.day_of_month ?? 1) : null,
              });
            }}
          >
            {Object.entries(CADENCES).map(([k, label]) => (
              <option key={k} value={k}>
                {label}
              </option>
            ))}
          </select>
        )}
      </Field>
      {usesWeekday && (
        <Field id={`${prefix}-weekday`} label="On" error={error} path="/weekday">
          {(c) => (
            <select
              {...c}
              value={value.weekday ?? 1}
              onChange={(e) => set({ weekday: Number(e.target.value) })}
            >
              {WEEKDAYS.map((d, i) => (
                <option key={d} value={i}>
                  {d}
                </option>
              ))}
            </select>
          )}
        </Field>
      )}
      {value.cadence === 'monthly' && (
        <Field id={`${prefix}-day`} label="Day of the month" error={error} path="/day_of_month">
          {(c) => (
            <input
              {...c}
              type="number"
              min={1}
              max={31}
              value={value.day_of_month ?? 1}
              onChange={(e) => set({ day_of_month: Number(e.target.value) })}
            />
          )}
        </Field>
      )}
      <Field id={`${prefix}-time`} label="At (local time)" error={error} path="/local_hour">
        {(c) => (
          <input
            {...c}
            type="time"
            required
            value={time}
            onChange={(e) => {
              const [h, m] = e.target.value.split(':').map(Number);
              set({ local_hour: h ?? 0, local_minute: m ?? 0 });
            }}
          />
        )}
      </Field>
      <Field
        id={`${prefix}-tz`}
        label="Time zone (IANA, e.g. Europe/Paris)"
        error={error}
        path="/timezone"
      >
        {(c) => (
          <input
            {...c}
            value={value.timezone}
            onChange={(e) => set({ timezone: e.target.value })}
          />
        )}
      </Field>
      <Field
        id={`${prefix}-missed`}
        label="Runs missed while nothing could run"
        error={error}
        path="/missed_run_policy"
      >
        {(c) => (
          <select
            {...c}
            value={value.missed_run_policy ?? 'skip'}
            onChange={(e) => set({ missed_run_policy: e.target.value as MissedRuns })}
          >
            {Object.entries(MISSED).map(([k, label]) => (
              <option key={k} value={k}>
                {label}
              </option>
            ))}
          </select>
        )}
      </Field>
    </>
  );
}

const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/** Creates a schedule auditing the repository (its default branch, or a branch) on a calendar. */
export function ScheduleForm({ ws, repository }: { ws: string; repository: string }) {
  const client = useQueryClient();
  const [name, setName] = useState('');
  const [branch, setBranch] = useState('');
  const [calendar, setCalendar] = useState<Calendar>(() => ({
    cadence: 'daily',
    local_hour: 2,
    local_minute: 0,
    timezone: browserZone(),
    weekday: null,
    day_of_month: null,
    missed_run_policy: 'skip',
  }));
  const create = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/v1/workspaces/{workspace_id}/audit-schedules', {
          params: { path: { workspace_id: ws } },
          body: {
            ...calendar,
            timezone: calendar.timezone.trim(),
            name: name.trim(),
            repository_id: repository,
            ...(branch.trim() ? { branch_ref: branch.trim() } : {}),
          },
        }),
      ),
    onSuccess: () => {
      setName('');
      setBranch('');
      void client.invalidateQueries({ queryKey: pageKeys.schedules(ws, repository) });
    },
  });
  const err = create.error;
  return (
    <FormCard
      title="New schedule"
      submit="Create the schedule"
      action={create}
      done={create.isSuccess ? `Schedule ${create.data.name} created.` : null}
    >
      <TextField
        id="s-name"
        label="Name"
        error={err}
        path="/name"
        value={name}
        onChange={setName}
      />
      <TextField
        id="s-branch"
        label="Branch (default: the default branch)"
        error={err}
        path="/branch_ref"
        value={branch}
        onChange={setBranch}
      />
      <CalendarFields prefix="s" value={calendar} onChange={setCalendar} error={err} />
    </FormCard>
  );
}

/** A schedule's controls: pause or resume it, or change its calendar. */
export function ScheduleEdit({ ws, schedule }: { ws: string; schedule: Schedule }) {
  const client = useQueryClient();
  const [editing, setEditing] = useState(false);
  const [calendar, setCalendar] = useState<Calendar>(() => calendarOf(schedule));
  const done = () =>
    void client.invalidateQueries({ queryKey: pageKeys.schedules(ws, schedule.repository_id) });
  const path = { workspace_id: ws, schedule_id: schedule.id };
  const toggle = useMutation({
    mutationFn: async () =>
      unwrap(
        schedule.state === 'paused'
          ? await api.POST('/v1/workspaces/{workspace_id}/audit-schedules/{schedule_id}/resume', {
              params: { path },
            })
          : await api.POST('/v1/workspaces/{workspace_id}/audit-schedules/{schedule_id}/pause', {
              params: { path },
            }),
      ),
    onSuccess: done,
  });
  const save = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.PATCH('/v1/workspaces/{workspace_id}/audit-schedules/{schedule_id}', {
          params: { path },
          body: {
            ...calendar,
            timezone: calendar.timezone.trim(),
            expected_version: schedule.version,
          },
        }),
      ),
    onSuccess: () => {
      setEditing(false);
      done();
    },
  });
  const prefix = `e-${schedule.id.slice(0, 8)}`;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  return (
    <div className="row">
      <button
        type="button"
        className="secondary"
        disabled={toggle.isPending}
        onClick={() => toggle.mutate()}
      >
        {schedule.state === 'paused' ? 'Resume' : 'Pause'}
        <span className="sr-only"> {schedule.name}</span>
      </button>
      <button
        type="button"
        className="secondary"
        aria-expanded={editing}
        onClick={() => {
          setCalendar(calendarOf(schedule));
          save.reset();
          setEditing(!editing);
        }}
      >
        Change the calendar<span className="sr-only"> of {schedule.name}</span>
      </button>
      {toggle.isError && <Problem error={toggle.error} />}
      {editing && (
        <form onSubmit={submit} aria-label={`Calendar of ${schedule.name}`} className="grid-form">
          <CalendarFields
            prefix={prefix}
            value={calendar}
            onChange={setCalendar}
            error={save.error}
          />
          <button type="submit" disabled={save.isPending}>
            Save the calendar
          </button>
          {save.isError && <Problem error={save.error} />}
        </form>
      )}
    </div>
  );
}

function calendarOf(s: Schedule): Calendar {
  return {
    cadence: s.cadence as Cadence,
    local_hour: s.local_hour,
    local_minute: s.local_minute,
    timezone: s.timezone,
    weekday: s.weekday,
    day_of_month: s.day_of_month,
    missed_run_policy: s.missed_run_policy as MissedRuns,
  };
}
