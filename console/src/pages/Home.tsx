/**
 * Workspace home: each repository with its last audit, gate outcome and open findings by
 * severity; what waits for this member: decisions, remediations, workflow actions and reports
 * to approve (never their own), and open blocking questions.
 */
import type { Schemas } from '../api/client';
import { useAudits, useFindings, useGate, useRepositories, useWorkspace } from '../api/queries';
import { useWaiting } from '../api/waiting';
import type { Viewer } from '../App';
import { Badge, Loading, Problem, Table, When } from '../components';
import { Link, useTitle } from '../router';

const SEVERITIES = ['high', 'medium', 'low'] as const;

function GateCell({ ws, audit }: { ws: string; audit: Schemas['AuditResponse'] | undefined }) {
  const gate = useGate(ws, audit?.id ?? '', audit?.status === 'completed');
  if (!audit || audit.status !== 'completed') return <span>—</span>;
  return <Badge value={gate.data?.outcome ?? null} />;
}

export function Home({ ws, viewer }: { ws: string; viewer: Viewer }) {
  const workspace = useWorkspace(ws);
  useTitle(workspace.data?.name ?? 'Workspace');
  const repos = useRepositories(ws);
  const audits = useAudits(ws);
  const findings = useFindings(ws);
  const waiting = useWaiting(ws, viewer);
  if (repos.isError) return <Problem error={repos.error} />;
  if (repos.isPending) return <Loading />;

  const lastAudit = new Map<string, Schemas['AuditResponse']>();
  for (const a of audits.data?.items ?? [])
    if (a.repository_id && !lastAudit.has(a.repository_id)) lastAudit.set(a.repository_id, a);
  const counts = new Map<string, Record<string, number>>();
  for (const f of findings.data?.items ?? []) {
    if (f.status !== 'open' || !f.repository_id) continue;
    const c = counts.get(f.repository_id) ?? {};
    c[f.severity] = (c[f.severity] ?? 0) + 1;
    counts.set(f.repository_id, c);
  }
  const {
    decisions: toApprove,
    remediations: fixesToApprove,
    actions: actionsToApprove,
    reports: reportsToApprove,
    blocking,
  } = waiting;
  const names = new Map((repos.data?.items ?? []).map((r) => [r.id, r.name]));

  return (
    <>
      <h1>{workspace.data?.name ?? 'Workspace'}</h1>
      {viewer.canWrite && (
        <section aria-labelledby="waiting">
          <h2 id="waiting">Waiting for you</h2>
          {toApprove.length +
            blocking.length +
            fixesToApprove.length +
            actionsToApprove.length +
            reportsToApprove.length ===
          0 ? (
            <p className="muted">Nothing needs you now.</p>
          ) : (
            <ul>
              {toApprove.map((d) => (
                <li key={d.id}>
                  Decision to approve: <Link to={`/app/w/${ws}/decisions#${d.id}`}>{d.title}</Link>
                </li>
              ))}
              {fixesToApprove.map((r) => (
                <li key={r.id}>
                  Remediation to approve:{' '}
                  <Link to={`/app/w/${ws}/remediations/${r.id}`}>{r.title}</Link>
                </li>
              ))}
              {actionsToApprove.map((a) => (
                <li key={a.id}>
                  Workflow action to approve:{' '}
                  <Link to={`/app/w/${ws}/actions#${a.id}`}>
                    {a.kind.replace(/_/g, ' ')}: {a.reason}
                  </Link>
                </li>
              ))}
              {reportsToApprove.map((a) => (
                <li key={a.id}>
                  Report to approve:{' '}
                  <Link to={`/app/w/${ws}/a/${a.id}#report`}>
                    {names.get(a.repository_id ?? '') ?? 'upload'}, audit of{' '}
                    <When at={a.completed_at} />
                  </Link>
                </li>
              ))}
              {blocking.map((c) => (
                <li key={c.id}>
                  Blocking question on <code>{c.subject_key}</code>:{' '}
                  <Link to={`/app/w/${ws}/uncertainty#${c.id}`}>{c.detail}</Link>
                </li>
              ))}
            </ul>
          )}
        </section>
      )}
      <section aria-labelledby="repos">
        <h2 id="repos">Repositories</h2>
        {repos.data.items.length === 0 ? (
          <p className="muted">No repository yet.</p>
        ) : (
          <Table
            label="Repositories table"
            columns={['Repository', 'Last audit', 'Gate', ...SEVERITIES]}
          >
            {repos.data.items.map((r) => {
              const a = lastAudit.get(r.id);
              const c = counts.get(r.id) ?? {};
              return (
                <tr key={r.id}>
                  <th scope="row">
                    <Link to={`/app/w/${ws}/r/${r.id}`}>{r.name}</Link>
                  </th>
                  <td>
                    {a ? (
                      <Link to={`/app/w/${ws}/a/${a.id}`}>
                        <Badge value={a.status} /> <When at={a.created_at} />
                      </Link>
                    ) : (
                      'never'
                    )}
                  </td>
                  <td>
                    <GateCell ws={ws} audit={a} />
                  </td>
                  {SEVERITIES.map((s) => (
                    <td key={s} className="num">
                      {c[s] ?? 0}
                    </td>
                  ))}
                </tr>
              );
            })}
          </Table>
        )}
      </section>
    </>
  );
}
