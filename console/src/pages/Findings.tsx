/**
 * Findings of the workspace, filtered by severity and status, with where each comes from (its
 * repository, or the upload audit that named none) and their locations; triage
 * (accept the risk, mark a false positive, reopen, each with a reason), the remediations that
 * fix each one, and planning a new one.
 */
import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../api/client';
import { pageKeys, useRemediations } from '../api/pages';
import { keys, useFindings, useRepositories } from '../api/queries';
import type { Viewer } from '../App';
import { Badge, Loading, Problem, useHashTarget } from '../components';
import { Link, navigate, useTitle } from '../router';

type Finding = Schemas['FindingResponse'];
type Remediation = Schemas['RemediationResponse'];
type Triage = 'accepted_risk' | 'false_positive' | 'open';
/** A remediation under way: no second plan is offered for its findings. */
const ACTIVE = new Set(['proposed', 'approved', 'in_progress', 'done']);

export function Findings({ ws, viewer }: { ws: string; viewer: Viewer }) {
  useTitle('Findings');
  const findings = useFindings(ws);
  const remediations = useRemediations(ws);
  const repos = useRepositories(ws);
  const [repository, setRepository] = useState('all');
  const [severity, setSeverity] = useState('all');
  // A link naming one finding (#id) shows every status: the finding may not be open.
  const [status, setStatus] = useState(() => (window.location.hash ? 'all' : 'open'));
  useHashTarget(findings.data !== undefined);
  if (findings.isError) return <Problem error={findings.error} />;
  if (findings.isPending) return <Loading />;
  const items = findings.data.items.filter(
    (f) =>
      (severity === 'all' || f.severity === severity) &&
      (status === 'all' || f.status === status) &&
      (repository === 'all' || f.repository_id === repository),
  );
  const fixes = new Map<string, Remediation[]>();
  for (const r of remediations.data?.items ?? [])
    for (const id of r.finding_ids) fixes.set(id, [...(fixes.get(id) ?? []), r]);
  return (
    <>
      <h1>Findings</h1>
      <div className="filters">
        <span>
          <label htmlFor="f-repo">Repository</label>{' '}
          <select id="f-repo" value={repository} onChange={(e) => setRepository(e.target.value)}>
            <option value="all">all</option>
            {(repos.data?.items ?? []).map((r) => (
              <option key={r.id} value={r.id}>
                {r.name}
              </option>
            ))}
          </select>
        </span>
        <span>
          <label htmlFor="f-severity">Severity</label>{' '}
          <select id="f-severity" value={severity} onChange={(e) => setSeverity(e.target.value)}>
            {['all', 'high', 'medium', 'low'].map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </span>
        <span>
          <label htmlFor="f-status">Status</label>{' '}
          <select id="f-status" value={status} onChange={(e) => setStatus(e.target.value)}>
            {['all', 'open', 'accepted_risk', 'false_positive', 'resolved'].map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </span>
      </div>
      <p className="muted" role="status">
        {items.length} of {findings.data.items.length} findings
      </p>
      {items.length === 0 && <p className="muted">No finding matches.</p>}
      <ul className="findings">
        {items.map((f) => (
          <FindingCard key={f.id} ws={ws} item={f} viewer={viewer} fixes={fixes.get(f.id) ?? []} />
        ))}
      </ul>
    </>
  );
}

function FindingCard({
  ws,
  item,
  viewer,
  fixes,
}: {
  ws: string;
  item: Finding;
  viewer: Viewer;
  fixes: Remediation[];
}) {
  const client = useQueryClient();
  const [reason, setReason] = useState('');
  const triage = useMutation({
    mutationFn: async (to: Triage) =>
      unwrap(
        await api.PATCH('/v1/workspaces/{workspace_id}/findings/{finding_id}', {
          params: { path: { workspace_id: ws, finding_id: item.id } },
          body: { status: to, note: reason.trim() },
        }),
      ),
    onSuccess: () => {
      setReason('');
      void client.invalidateQueries({ queryKey: keys.findings(ws) });
    },
  });
  const plan = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/v1/workspaces/{workspace_id}/remediations', {
          params: { path: { workspace_id: ws } },
          body: { finding_ids: [item.id] },
        }),
      ),
    onSuccess: (made) => {
      void client.invalidateQueries({ queryKey: pageKeys.remediations(ws) });
      navigate(`/app/w/${ws}/remediations/${made.id}`);
    },
  });
  const id = `f-${item.id}`;
  const canTriage = viewer.canWrite && viewer.scopes.has('findings:write');
  const short = reason.trim().length < 3 || triage.isPending;
  return (
    <li className="card" id={item.id} aria-labelledby={`${id}-t`} tabIndex={-1}>
      <h2 id={`${id}-t`}>{item.title}</h2>
      <p>
        <Badge value={item.severity} /> <Badge value={item.status} />{' '}
        <code>{item.control_key}</code>
        {item.source_label && (
          <>
            {' '}
            · <span className="source">{item.source_label}</span>
          </>
        )}
      </p>
      <p>{item.detail}</p>
      {item.note && <p className="muted">Note: {item.note}</p>}
      {item.entity_key && (
        <p>
          Entity{' '}
          <Link
            to={`/app/w/${ws}/a/${item.last_seen_audit_id}/graph?entity=${encodeURIComponent(item.entity_key)}`}
          >
            <code>{item.entity_key}</code>
          </Link>
        </p>
      )}
      {item.locations.length > 0 && (
        <ul>
          {item.locations.map((l, i) => (
            <li key={i}>
              <code>
                {l.path}:{l.start_line}
                {l.end_line !== l.start_line ? `–${l.end_line}` : ''}
              </code>
            </li>
          ))}
        </ul>
      )}
      <p>
        Remediation:{' '}
        {fixes.length === 0
          ? 'none yet'
          : fixes.map((r, i) => (
              <span key={r.id}>
                {i > 0 && ', '}
                <Link to={`/app/w/${ws}/remediations/${r.id}`}>{r.title}</Link> (
                {r.status.replace(/_/g, ' ')})
              </span>
            ))}
      </p>
      {viewer.canWrite &&
        viewer.scopes.has('remediations:write') &&
        item.status === 'open' &&
        !fixes.some((r) => ACTIVE.has(r.status)) && (
          <p>
            <button
              type="button"
              className="secondary"
              disabled={plan.isPending}
              onClick={() => plan.mutate()}
            >
              Plan a fix <span className="sr-only">for {item.title}</span>
            </button>
          </p>
        )}
      {plan.isError && <Problem error={plan.error} />}
      {canTriage && item.status !== 'resolved' && (
        <div className="actions">
          <label htmlFor={`${id}-r`}>Reason</label>
          <textarea
            id={`${id}-r`}
            value={reason}
            maxLength={2000}
            onChange={(e) => setReason(e.target.value)}
          />
          <div className="row">
            {item.status !== 'accepted_risk' && (
              <button type="button" disabled={short} onClick={() => triage.mutate('accepted_risk')}>
                Accept risk
              </button>
            )}
            {item.status !== 'false_positive' && (
              <button
                type="button"
                disabled={short}
                onClick={() => triage.mutate('false_positive')}
              >
                Mark false positive
              </button>
            )}
            {item.status !== 'open' && (
              <button
                type="button"
                className="secondary"
                disabled={short}
                onClick={() => triage.mutate('open')}
              >
                Reopen
              </button>
            )}
          </div>
          {triage.isError && <Problem error={triage.error} />}
        </div>
      )}
    </li>
  );
}
