/**
 * Workflow actions: privileged requests (delete a repository, purge attachments, a deep review,
 * a gate policy change, revoking a member's tokens) that wait for a second member. Requesting one
 * (WorkflowActionRequest); the list by status; a pending action is approved or rejected with a rationale by another member holding
 * workflow_actions:approve; what the execution did.
 */
import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../api/client';
import { pageKeys, useMemberNames, useWorkflowActions } from '../api/pages';
import { useRepositories } from '../api/queries';
import type { Viewer } from '../App';
import { ApprovalControls } from '../approval';
import { Badge, Loading, Problem, When } from '../components';
import { Link, useTitle } from '../router';
import { RequestAction } from './WorkflowActionRequest';

type Action = Schemas['WorkflowActionResponse'];
const STATES = ['all', 'pending', 'approved', 'rejected', 'expired', 'executed', 'failed'];

export function WorkflowActions({ ws, viewer }: { ws: string; viewer: Viewer }) {
  useTitle('Workflow actions');
  const actions = useWorkflowActions(ws);
  const names = useMemberNames(ws, viewer.canWrite);
  const repos = useRepositories(ws);
  const [status, setStatus] = useState('all');
  if (actions.isError) return <Problem error={actions.error} />;
  if (actions.isPending) return <Loading />;
  const items = actions.data.items.filter((a) => status === 'all' || a.status === status);
  const who = (id: string | null) => (id ? (names.data?.get(id) ?? id.slice(0, 8)) : '—');
  const repoNames = new Map((repos.data?.items ?? []).map((r) => [r.id, r.name]));
  return (
    <>
      <h1>Workflow actions</h1>
      <p className="muted">Privileged actions run only once another member approves them.</p>
      {viewer.canWrite && viewer.scopes.has('workflow_actions:request') && (
        <RequestAction ws={ws} />
      )}
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
      {items.length === 0 && <p className="muted">No workflow action matches.</p>}
      {items.map((a) => (
        <ActionCard key={a.id} ws={ws} item={a} viewer={viewer} who={who} repoNames={repoNames} />
      ))}
    </>
  );
}

function Target({
  ws,
  item,
  who,
  repoNames,
}: {
  ws: string;
  item: Action;
  who: (id: string | null) => string;
  repoNames: Map<string, string>;
}) {
  const t = item.target;
  return (
    <ul className="plain">
      {t.repository_id && (
        <li>
          Repository{' '}
          <Link to={`/app/w/${ws}/r/${t.repository_id}`}>
            {repoNames.get(t.repository_id) ?? t.repository_id}
          </Link>
        </li>
      )}
      {t.audit_id && (
        <li>
          Audit <Link to={`/app/w/${ws}/a/${t.audit_id}`}>{t.audit_id}</Link>
        </li>
      )}
      {t.member_id && <li>Member {who(t.member_id)}</li>}
      {t.branch_ref && (
        <li>
          Branch <code>{t.branch_ref}</code>
        </li>
      )}
      {t.gate_policy && (
        <li>
          Gate policy <code>{JSON.stringify(t.gate_policy)}</code>
        </li>
      )}
    </ul>
  );
}

function ActionCard({
  ws,
  item,
  viewer,
  who,
  repoNames,
}: {
  ws: string;
  item: Action;
  viewer: Viewer;
  who: (id: string | null) => string;
  repoNames: Map<string, string>;
}) {
  const client = useQueryClient();
  const path = { workspace_id: ws, action_id: item.id };
  const decide = async (outcome: 'approved' | 'rejected', rationale: string) =>
    unwrap(
      outcome === 'approved'
        ? await api.POST('/v1/workspaces/{workspace_id}/workflow-actions/{action_id}/approval', {
            params: { path },
            body: { rationale },
          })
        : await api.POST('/v1/workspaces/{workspace_id}/workflow-actions/{action_id}/rejection', {
            params: { path },
            body: { rationale },
          }),
    );
  const id = `wa-${item.id}`;
  return (
    <article className="card" id={item.id} aria-labelledby={`${id}-t`} data-status={item.status}>
      <h2 id={`${id}-t`}>{item.kind.replace(/_/g, ' ')}</h2>
      <p>
        <Badge value={item.status} />{' '}
        <span className="muted">
          requested by {who(item.requested_by)} · <When at={item.created_at} />
          {item.status === 'pending' && (
            <>
              {' '}
              · expires <When at={item.expires_at} />
            </>
          )}
        </span>
      </p>
      <p>Reason: {item.reason}</p>
      <Target ws={ws} item={item} who={who} repoNames={repoNames} />
      {item.decided_by && (
        <p>
          Decided by {who(item.decided_by)} ({item.decided_by_role}) · <When at={item.decided_at} />
          {item.decision_rationale && <> — {item.decision_rationale}</>}
        </p>
      )}
      {item.executed_at && (
        <p>
          Executed <When at={item.executed_at} />
          {item.outcome && (
            <>
              : <code>{JSON.stringify(item.outcome)}</code>
            </>
          )}
        </p>
      )}
      {item.error_code && (
        <p>
          Failed: <code>{item.error_code}</code>
        </p>
      )}
      {viewer.canWrite &&
        item.status === 'pending' &&
        viewer.scopes.has('workflow_actions:approve') && (
          <ApprovalControls
            id={id}
            isAuthor={item.requested_by === viewer.memberId}
            authorNote="You requested this action: another member holding workflow_actions:approve approves it."
            onDecide={decide}
            onDone={() => void client.invalidateQueries({ queryKey: pageKeys.actions(ws) })}
          />
        )}
    </article>
  );
}
