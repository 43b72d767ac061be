/**
 * Remediations: the plans to fix findings. The list (filter by status) and one remediation:
 * its plan, the findings it fixes, approvals (another member holding remediations:approve
 * approves or rejects with a rationale), the moves (start, mark done) and the verification
 * result the next audit of the repository gives.
 */
import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../api/client';
import { pageKeys, useMemberNames, useRemediation, useRemediations } from '../api/pages';
import { keys, useFindings } from '../api/queries';
import type { Viewer } from '../App';
import { ApprovalControls } from '../approval';
import { Badge, Loading, Problem, When, Table } from '../components';
import { Link, useTitle } from '../router';

type Remediation = Schemas['RemediationResponse'];
const STATES = [
  'all',
  'proposed',
  'approved',
  'rejected',
  'in_progress',
  'done',
  'verified',
  'not_verified',
];

export function Remediations({
  ws,
  viewer,
  selected,
}: {
  ws: string;
  viewer: Viewer;
  selected: string | null;
}) {
  useTitle('Remediations');
  const list = useRemediations(ws);
  const [status, setStatus] = useState('all');
  if (list.isError) return <Problem error={list.error} />;
  if (list.isPending) return <Loading />;
  const items = list.data.items.filter((r) => status === 'all' || r.status === status);
  return (
    <>
      <h1>Remediations</h1>
      {selected && <RemediationDetail ws={ws} id={selected} viewer={viewer} />}
      <h2>All remediations</h2>
      <div className="filters">
        <label>
          Status{' '}
          <select value={status} onChange={(e) => setStatus(e.target.value)}>
            {STATES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
      </div>
      {items.length === 0 ? (
        <p className="muted">
          No remediation{status === 'all' ? ' yet: plan one from a finding' : ' in this state'}.
        </p>
      ) : (
        <Table
          label="Remediations table"
          columns={['Remediation', 'Status', 'Risk', 'Effort', 'Findings', 'Created']}
        >
          {items.map((r) => (
            <tr key={r.id} aria-current={r.id === selected ? 'true' : undefined}>
              <th scope="row">
                <Link to={`/app/w/${ws}/remediations/${r.id}`}>{r.title}</Link>
              </th>
              <td>
                <Badge value={r.status} />
              </td>
              <td>{r.risk}</td>
              <td>{r.effort}</td>
              <td className="num">{r.finding_ids.length}</td>
              <td>
                <When at={r.created_at} />
              </td>
            </tr>
          ))}
        </Table>
      )}
    </>
  );
}

function RemediationDetail({ ws, id, viewer }: { ws: string; id: string; viewer: Viewer }) {
  const client = useQueryClient();
  const remediation = useRemediation(ws, id);
  const findings = useFindings(ws);
  const names = useMemberNames(ws, viewer.canWrite);
  const refresh = () => {
    void client.invalidateQueries({ queryKey: pageKeys.remediations(ws) });
    void client.invalidateQueries({ queryKey: keys.findings(ws) });
  };
  if (remediation.isError) return <Problem error={remediation.error} />;
  if (remediation.isPending) return <Loading />;
  const r = remediation.data;
  const who = (memberId: string | null) =>
    memberId ? (names.data?.get(memberId) ?? memberId.slice(0, 8)) : '—';
  const fixed = (findings.data?.items ?? []).filter((f) => r.finding_ids.includes(f.id));
  const path = { workspace_id: ws, remediation_id: r.id };
  const decide = async (outcome: 'approved' | 'rejected', rationale: string) =>
    unwrap(
      outcome === 'approved'
        ? await api.POST('/v1/workspaces/{workspace_id}/remediations/{remediation_id}/approval', {
            params: { path },
            body: { rationale },
          })
        : await api.POST('/v1/workspaces/{workspace_id}/remediations/{remediation_id}/rejection', {
            params: { path },
            body: { rationale },
          }),
    );
  return (
    <article className="card detail" aria-labelledby="rem-title" data-status={r.status}>
      <h2 id="rem-title">{r.title}</h2>
      <p>
        <Badge value={r.status} /> risk <Badge value={r.risk} /> effort <Badge value={r.effort} />{' '}
        <span className="muted">
          written by {r.source === 'manual' ? who(r.created_by) : `the ${r.source}`} ·{' '}
          <When at={r.created_at} />
        </span>
      </p>
      {r.steps.length === 0 ? (
        <p className="muted" role="status">
          The plan is being written…
        </p>
      ) : (
        <>
          <p>{r.summary}</p>
          <h3>Steps</h3>
          <ol>
            {r.steps.map((s, i) => (
              <li key={i}>
                <strong>{s.title}</strong> — {s.detail}
              </li>
            ))}
          </ol>
        </>
      )}
      <h3>Findings it fixes</h3>
      <ul>
        {r.finding_ids.map((fid) => {
          const f = fixed.find((x) => x.id === fid);
          return (
            <li key={fid}>
              <Link to={`/app/w/${ws}/findings#${fid}`}>{f ? f.title : fid}</Link>
              {f && (
                <>
                  {' '}
                  <Badge value={f.severity} /> <Badge value={f.status} />
                </>
              )}
            </li>
          );
        })}
      </ul>
      {r.affected_entity_keys.length > 0 && (
        <p>
          Entities:{' '}
          {r.affected_entity_keys.map((k, i) => (
            <span key={k}>
              {i > 0 && ', '}
              {r.audit_id ? (
                <Link to={`/app/w/${ws}/a/${r.audit_id}/graph?entity=${encodeURIComponent(k)}`}>
                  <code>{k}</code>
                </Link>
              ) : (
                <code>{k}</code>
              )}
            </span>
          ))}
        </p>
      )}
      {r.approvals.length > 0 && (
        <>
          <h3>Approvals</h3>
          <ul>
            {r.approvals.map((a) => (
              <li key={a.id}>
                <Badge value={a.outcome} /> by {who(a.actor_id)} ({a.actor_role}) ·{' '}
                <When at={a.created_at} /> — {a.rationale}
              </li>
            ))}
          </ul>
        </>
      )}
      {r.verification && (
        <section aria-labelledby="rem-verification">
          <h3 id="rem-verification">Verification</h3>
          <p>
            <Badge value={r.verification.outcome} /> by the{' '}
            <Link to={`/app/w/${ws}/a/${r.verification.audit_id}`}>audit</Link> of{' '}
            <When at={r.verification.evaluated_at} />: {r.verification.resolved_finding_ids.length}{' '}
            resolved, {r.verification.open_finding_ids.length} still observed.
          </p>
        </section>
      )}
      {!r.verification && (r.status === 'done' || r.status === 'in_progress') && (
        <p className="muted">
          {r.status === 'done'
            ? 'Done: the next completed audit of the repository verifies it.'
            : 'In progress: mark it done when the fix is merged.'}
        </p>
      )}
      {r.latest_rationale && !r.approvals.some((a) => a.rationale === r.latest_rationale) && (
        <p className="muted">Last rationale: {r.latest_rationale}</p>
      )}
      {viewer.canWrite &&
        r.status === 'proposed' &&
        r.steps.length > 0 &&
        viewer.scopes.has('remediations:approve') && (
          <ApprovalControls
            id={`rem-${r.id}`}
            isAuthor={r.created_by === viewer.memberId}
            authorNote="You created this remediation: another member holding remediations:approve approves it."
            onDecide={decide}
            onDone={refresh}
          />
        )}
      {viewer.canWrite && viewer.scopes.has('remediations:write') && (
        <Moves ws={ws} item={r} onDone={refresh} />
      )}
    </article>
  );
}

const NEXT: Record<string, { to: 'in_progress' | 'done'; label: string } | undefined> = {
  approved: { to: 'in_progress', label: 'Start the work' },
  not_verified: { to: 'in_progress', label: 'Work on it again' },
  in_progress: { to: 'done', label: 'Mark done' },
};

function Moves({ ws, item, onDone }: { ws: string; item: Remediation; onDone: () => void }) {
  const [rationale, setRationale] = useState('');
  const next = NEXT[item.status];
  const move = useMutation({
    mutationFn: async (to: 'in_progress' | 'done') =>
      unwrap(
        await api.POST('/v1/workspaces/{workspace_id}/remediations/{remediation_id}/transitions', {
          params: { path: { workspace_id: ws, remediation_id: item.id } },
          body: { status: to, rationale: rationale.trim() },
        }),
      ),
    onSuccess: () => {
      setRationale('');
      onDone();
    },
  });
  if (!next) return null;
  return (
    <div className="actions">
      <label htmlFor={`move-${item.id}`}>Why ({next.label.toLowerCase()})</label>
      <textarea
        id={`move-${item.id}`}
        value={rationale}
        maxLength={4000}
        onChange={(e) => setRationale(e.target.value)}
      />
      <div className="row">
        <button
          type="button"
          disabled={rationale.trim().length < 3 || move.isPending}
          onClick={() => move.mutate(next.to)}
        >
          {next.label}
        </button>
      </div>
      {move.isError && <Problem error={move.error} />}
    </div>
  );
}
