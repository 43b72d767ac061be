/**
 * A repository: its audits (status, origin, commit, branch), starting a new audit (a branch, a
 * commit or a profile), its audit profiles and its schedules with their next runs; creating a
 * profile or a schedule, pausing, resuming or changing a schedule (RepositoryForms).
 */
import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../api/client';
import { useProfiles, useSchedules } from '../api/pages';
import { keys, useAudits, useRepository } from '../api/queries';
import type { Viewer } from '../App';
import { Badge, Loading, Problem, When, Table } from '../components';
import { Link, navigate, useTitle } from '../router';
import { ProfileForm, ScheduleEdit, ScheduleForm } from './RepositoryForms';

export function RepositoryPage({ ws, id, viewer }: { ws: string; id: string; viewer: Viewer }) {
  const repo = useRepository(ws, id);
  const audits = useAudits(ws, id);
  useTitle(repo.data?.name ?? 'Repository');
  const client = useQueryClient();
  const profiles = useProfiles(ws, id);
  const schedules = useSchedules(ws, id);
  const [branch, setBranch] = useState('');
  const [commit, setCommit] = useState('');
  const [profile, setProfile] = useState('');
  const start = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/v1/workspaces/{workspace_id}/audits', {
          params: { path: { workspace_id: ws } },
          body: {
            repository_id: id,
            ...(branch.trim() ? { branch_ref: branch.trim() } : {}),
            ...(commit.trim() ? { commit_sha: commit.trim() } : {}),
            ...(profile ? { profile_id: profile } : {}),
          },
        }),
      ),
    onSuccess: (audit) => {
      void client.invalidateQueries({ queryKey: keys.audits(ws) });
      navigate(`/app/w/${ws}/a/${audit.id}`);
    },
  });
  const canManage = viewer.canWrite && viewer.scopes.has('audits:write');
  if (repo.isError) return <Problem error={repo.error} />;
  if (repo.isPending) return <Loading />;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    start.mutate();
  };
  return (
    <>
      <p className="crumbs">
        <Link to={`/app/w/${ws}`}>Home</Link> / repository
      </p>
      <h1>{repo.data.name}</h1>
      <p className="muted">
        <code>{repo.data.url}</code> · default branch <code>{repo.data.default_branch}</code>
      </p>
      {repo.data.description && <p>{repo.data.description}</p>}
      {canManage && (
        <form className="inline" onSubmit={submit} aria-label="Start an audit">
          <label htmlFor="branch">Branch (default: {repo.data.default_branch})</label>
          <input id="branch" value={branch} onChange={(e) => setBranch(e.target.value)} />
          <label htmlFor="commit">Commit (40 hex, optional)</label>
          <input
            id="commit"
            value={commit}
            pattern="[0-9a-f]{40}"
            onChange={(e) => setCommit(e.target.value)}
          />
          {(profiles.data?.items.length ?? 0) > 0 && (
            <>
              <label htmlFor="profile">Profile</label>
              <select id="profile" value={profile} onChange={(e) => setProfile(e.target.value)}>
                <option value="">none</option>
                {profiles.data!.items.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.name}
                  </option>
                ))}
              </select>
            </>
          )}
          <button type="submit" disabled={start.isPending}>
            Start an audit
          </button>
          {start.isError && <Problem error={start.error} />}
        </form>
      )}
      <h2>Audits</h2>
      {audits.isPending ? (
        <Loading />
      ) : audits.isError ? (
        <Problem error={audits.error} />
      ) : audits.data.items.length === 0 ? (
        <p className="muted">Not audited yet.</p>
      ) : (
        <Table label="Audits table" columns={['Started', 'Status', 'Origin', 'Branch', 'Commit']}>
          {audits.data.items.map((a) => (
            <tr key={a.id}>
              <th scope="row">
                <Link to={`/app/w/${ws}/a/${a.id}`}>
                  <When at={a.created_at} />
                </Link>
              </th>
              <td>
                <Badge value={a.status} />
              </td>
              <td>{a.origin}</td>
              <td>{a.branch_ref ?? '—'}</td>
              <td>
                <code>{a.commit_sha?.slice(0, 12) ?? '—'}</code>
              </td>
            </tr>
          ))}
        </Table>
      )}
      <h2>Profiles</h2>
      {profiles.isError ? (
        <Problem error={profiles.error} />
      ) : (profiles.data?.items.length ?? 0) === 0 ? (
        <p className="muted">No audit profile.</p>
      ) : (
        <Table label="Profiles table" columns={['Profile', 'Branch', 'Purpose', 'Scope']}>
          {profiles.data!.items.map((p) => (
            <tr key={p.id}>
              <th scope="row">{p.name}</th>
              <td>
                <code>{p.branch_ref}</code>
              </td>
              <td>{p.purpose || '—'}</td>
              <td>{scopeText(p.source_scope)}</td>
            </tr>
          ))}
        </Table>
      )}
      {canManage && <ProfileForm ws={ws} repository={id} />}
      <h2>Schedules</h2>
      {schedules.isError ? (
        <Problem error={schedules.error} />
      ) : (schedules.data?.items.length ?? 0) === 0 ? (
        <p className="muted">No schedule.</p>
      ) : (
        <Table
          label="Schedules table"
          columns={['Schedule', 'Cadence', 'State', 'Next run', 'Last run', canManage && 'Change']}
        >
          {schedules.data!.items.map((s) => (
            <tr key={s.id} data-schedule={s.id}>
              <th scope="row">{s.name}</th>
              <td>
                {s.cadence} at {String(s.local_hour).padStart(2, '0')}:
                {String(s.local_minute).padStart(2, '0')} ({s.timezone})
                {s.branch_ref && (
                  <>
                    {' '}
                    · <code>{s.branch_ref}</code>
                  </>
                )}
              </td>
              <td>
                <Badge value={s.state} />
                {s.last_error_code && <code> {s.last_error_code}</code>}
              </td>
              <td className="next-run">
                {s.state === 'paused' ? 'paused' : <When at={s.next_run_at} />}
              </td>
              <td>
                <When at={s.last_run_at} />
              </td>
              {canManage && (
                <td>
                  <ScheduleEdit ws={ws} schedule={s} />
                </td>
              )}
            </tr>
          ))}
        </Table>
      )}
      {canManage && <ScheduleForm ws={ws} repository={id} />}
    </>
  );
}

function scopeText(scope: Schemas['AuditSourceScope'] | undefined): string {
  if (!scope) return 'everything';
  const parts = [
    scope.include?.length ? `include ${scope.include.join(', ')}` : '',
    scope.exclude?.length ? `exclude ${scope.exclude.join(', ')}` : '',
    scope.source_types?.length ? `sources ${scope.source_types.join(', ')}` : '',
    scope.max_files ? `at most ${scope.max_files} files` : '',
  ].filter(Boolean);
  return parts.length ? parts.join('; ') : 'everything';
}
