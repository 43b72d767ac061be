/** Uncertainty cases: the open questions about the architecture; resolve or dismiss with a summary. */
import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../api/client';
import { keys, useUncertaintyCases } from '../api/queries';
import type { Viewer } from '../App';
import { Badge, Loading, Problem, When } from '../components';
import { useTitle } from '../router';

type Case = Schemas['ArchitectureUncertaintyCaseResponse'];

export function Uncertainty({ ws, viewer }: { ws: string; viewer: Viewer }) {
  useTitle('Uncertainty cases');
  const cases = useUncertaintyCases(ws);
  if (cases.isError) return <Problem error={cases.error} />;
  if (cases.isPending) return <Loading />;
  return (
    <>
      <h1>Uncertainty cases</h1>
      {cases.data.items.length === 0 && <p className="muted">No open question.</p>}
      {cases.data.items.map((c) => (
        <CaseCard key={c.id} ws={ws} item={c} viewer={viewer} />
      ))}
    </>
  );
}

function CaseCard({ ws, item, viewer }: { ws: string; item: Case; viewer: Viewer }) {
  const client = useQueryClient();
  const [summary, setSummary] = useState('');
  const update = useMutation({
    mutationFn: async (state: 'resolved' | 'dismissed') =>
      unwrap(
        await api.PATCH('/v1/workspaces/{workspace_id}/uncertainty-cases/{case_id}', {
          params: { path: { workspace_id: ws, case_id: item.id } },
          body: { state, resolution_summary: summary.trim() },
        }),
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: keys.uncertainty(ws) }),
  });
  const open = item.state === 'open' || item.state === 'investigating';
  const id = `c-${item.id}`;
  return (
    <article className="card" id={item.id} aria-labelledby={`${id}-t`}>
      <h2 id={`${id}-t`}>
        <code>{item.subject_key}</code> {item.field && <code>{item.field}</code>}
      </h2>
      <p>
        <Badge value={item.state} /> {item.blocking && <Badge value="blocking" />}{' '}
        <Badge value={item.reason} /> <When at={item.detected_at} />
      </p>
      <p>{item.detail}</p>
      {item.resolution_summary && <p className="muted">Resolution: {item.resolution_summary}</p>}
      {open && viewer.canWrite && viewer.scopes.has('findings:write') && (
        <div className="actions">
          <label htmlFor={`${id}-s`}>Resolution summary</label>
          <textarea id={`${id}-s`} value={summary} onChange={(e) => setSummary(e.target.value)} />
          <button
            type="button"
            disabled={summary.trim().length < 3 || update.isPending}
            onClick={() => update.mutate('resolved')}
          >
            Resolve
          </button>
          <button
            type="button"
            className="secondary"
            disabled={summary.trim().length < 3 || update.isPending}
            onClick={() => update.mutate('dismissed')}
          >
            Dismiss
          </button>
          {update.isError && <Problem error={update.error} />}
        </div>
      )}
    </article>
  );
}
