/** A repository: its audits (status, origin, commit, branch) and starting a new audit. */
import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { keys, useAudits, useRepository } from '../api/queries';
import type { Viewer } from '../App';
import { Badge, Loading, Problem, When } from '../components';
import { Link, navigate, useTitle } from '../router';

export function RepositoryPage({ ws, id, viewer }: { ws: string; id: string; viewer: Viewer }) {
  const repo = useRepository(ws, id);
  const audits = useAudits(ws, id);
  useTitle(repo.data?.name ?? 'Repository');
  const client = useQueryClient();
  const [branch, setBranch] = useState('');
  const start = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/v1/workspaces/{workspace_id}/audits', {
          params: { path: { workspace_id: ws } },
          body: { repository_id: id, ...(branch.trim() ? { branch_ref: branch.trim() } : {}) },
        }),
      ),
    onSuccess: (audit) => {
      void client.invalidateQueries({ queryKey: keys.audits(ws) });
      navigate(`/app/w/${ws}/a/${audit.id}`);
    },
  });
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
      {viewer.canWrite && viewer.scopes.has('audits:write') && (
        <form className="inline" onSubmit={submit} aria-label="Start an audit">
          <label htmlFor="branch">Branch (default: {repo.data.default_branch})</label>
          <input id="branch" value={branch} onChange={(e) => setBranch(e.target.value)} />
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
        <div className="scroll" tabIndex={0} role="region" aria-label="Audits table">
          <table>
            <thead>
              <tr>
                <th scope="col">Started</th>
                <th scope="col">Status</th>
                <th scope="col">Origin</th>
                <th scope="col">Branch</th>
                <th scope="col">Commit</th>
              </tr>
            </thead>
            <tbody>
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
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
