/**
 * Decisions: a board by status, a proposal whose evidence is the evidence of a relationship
 * picked from the repository's latest snapshot, and the moves (submit for review; approve or
 * reject with a rationale by another member holding decisions:approve), and each decision's brief
 * (its Markdown ADR, shown as text and offered as a file).
 */
import { useEffect, useMemo, useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../api/client';
import { moveDecision, type DecisionMove } from '../api/decisions';
import { keys, useArchitecture, useDecisions, useRepositories } from '../api/queries';
import type { Viewer } from '../App';
import { Badge, Loading, Problem, When, useHashTarget } from '../components';
import { useTitle } from '../router';

type Decision = Schemas['ArchitectureDecisionResponse'];
const COLUMNS = [
  'proposed',
  'in_review',
  'approved',
  'rejected',
  'implemented',
  'verified',
] as const;

export function Decisions({ ws, viewer }: { ws: string; viewer: Viewer }) {
  useTitle('Decisions');
  const decisions = useDecisions(ws);
  useHashTarget(decisions.data !== undefined);
  if (decisions.isError) return <Problem error={decisions.error} />;
  if (decisions.isPending) return <Loading />;
  const items = decisions.data.items;
  return (
    <>
      <h1>Decisions</h1>
      {viewer.canWrite && viewer.scopes.has('decisions:write') && viewer.memberId && (
        <ProposeForm ws={ws} ownerId={viewer.memberId} />
      )}
      <div className="board">
        {COLUMNS.map((status) => (
          <section key={status} className="column" aria-labelledby={`col-${status}`}>
            <h2 id={`col-${status}`}>
              {status.replace('_', ' ')} ({items.filter((d) => d.status === status).length})
            </h2>
            {items
              .filter((d) => d.status === status)
              .map((d) => (
                <DecisionCard key={d.id} ws={ws} decision={d} viewer={viewer} />
              ))}
          </section>
        ))}
      </div>
    </>
  );
}

function DecisionCard({
  ws,
  decision,
  viewer,
}: {
  ws: string;
  decision: Decision;
  viewer: Viewer;
}) {
  const client = useQueryClient();
  const [rationale, setRationale] = useState('');
  const [option, setOption] = useState(decision.options[0]?.id ?? '');
  const move = useMutation({
    mutationFn: (to: DecisionMove) =>
      moveDecision(ws, decision.id, to, rationale.trim(), to === 'approved' ? option : undefined),
    onSuccess: () => client.invalidateQueries({ queryKey: keys.decisions(ws) }),
  });
  const mine = decision.created_by === viewer.memberId;
  const canReview = viewer.canWrite && viewer.scopes.has('decisions:write');
  const canApprove =
    viewer.canWrite &&
    viewer.scopes.has('decisions:approve') &&
    !mine &&
    decision.status === 'in_review';
  const ready = rationale.trim().length >= 3;
  const id = `d-${decision.id}`;
  return (
    <article className="card" id={decision.id} aria-labelledby={`${id}-title`} tabIndex={-1}>
      <h3 id={`${id}-title`}>{decision.title}</h3>
      <p className="muted">
        <Badge value={decision.status} /> <When at={decision.updated_at} />
      </p>
      <p>{decision.question}</p>
      {decision.latest_rationale && <p className="muted">“{decision.latest_rationale}”</p>}
      {decision.verification_result && (
        <p>
          Verification <Badge value={decision.verification_result.outcome} />
        </p>
      )}
      {((decision.status === 'proposed' && canReview) || canApprove) && (
        <div className="actions">
          <label htmlFor={`${id}-why`}>Rationale</label>
          <textarea
            id={`${id}-why`}
            value={rationale}
            onChange={(e) => setRationale(e.target.value)}
          />
          {decision.status === 'proposed' && (
            <button
              type="button"
              disabled={!ready || move.isPending}
              onClick={() => move.mutate('in_review')}
            >
              Submit for review
            </button>
          )}
          {canApprove && (
            <>
              <label htmlFor={`${id}-option`}>Option</label>
              <select
                id={`${id}-option`}
                value={option}
                onChange={(e) => setOption(e.target.value)}
              >
                {decision.options.map((o) => (
                  <option key={o.id} value={o.id}>
                    {o.title}
                  </option>
                ))}
              </select>
              <button
                type="button"
                disabled={!ready || move.isPending}
                onClick={() => move.mutate('approved')}
              >
                Approve
              </button>
              <button
                type="button"
                className="secondary"
                disabled={!ready || move.isPending}
                onClick={() => move.mutate('rejected')}
              >
                Reject
              </button>
            </>
          )}
          {move.isError && <Problem error={move.error} />}
        </div>
      )}
      {decision.status === 'in_review' && mine && (
        <p className="muted">Waiting for another member’s approval.</p>
      )}
      <Brief ws={ws} decision={decision} />
    </article>
  );
}

/**
 * The brief (getDecisionBrief), fetched when opened: its Markdown shown as text, never as HTML
 * (the options, rationale and evidence paths come from people and audited repositories), and a
 * link that saves it under its own filename.
 */
function Brief({ ws, decision }: { ws: string; decision: Decision }) {
  const [open, setOpen] = useState(false);
  const brief = useQuery({
    queryKey: [...keys.decisions(ws), decision.id, 'brief', decision.version],
    enabled: open,
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/decisions/{decision_id}/brief', {
          params: { path: { workspace_id: ws, decision_id: decision.id } },
        }),
      ),
  });
  const markdown = brief.data?.markdown;
  const href = useMemo(
    () =>
      markdown === undefined
        ? null
        : URL.createObjectURL(new Blob([markdown], { type: 'text/markdown;charset=utf-8' })),
    [markdown],
  );
  useEffect(
    () => () => {
      if (href) URL.revokeObjectURL(href);
    },
    [href],
  );
  return (
    <details className="brief" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>The brief</summary>
      {brief.isPending && open && <Loading />}
      {brief.isError && <Problem error={brief.error} />}
      {brief.data && (
        <>
          <p>
            <a href={href ?? undefined} download={brief.data.filename}>
              Download {brief.data.filename}
            </a>
          </p>
          <pre className="brief-text" tabIndex={0} aria-label={`Brief of ${decision.title}`}>
            {brief.data.markdown}
          </pre>
        </>
      )}
    </details>
  );
}

/** The newest snapshot of a repository (its id and the audit that made it). */
function useLatestSnapshot(ws: string, repository: string) {
  return useQuery({
    queryKey: ['ws', ws, 'repositories', repository, 'snapshots'],
    enabled: repository !== '',
    queryFn: async () =>
      unwrap(
        await api.GET(
          '/v1/workspaces/{workspace_id}/repositories/{repository_id}/architecture/snapshots',
          {
            params: { path: { workspace_id: ws, repository_id: repository }, query: { limit: 1 } },
          },
        ),
      ).items[0] ?? null,
  });
}

function ProposeForm({ ws, ownerId }: { ws: string; ownerId: string }) {
  const client = useQueryClient();
  const repos = useRepositories(ws);
  const [repository, setRepository] = useState('');
  const snapshot = useLatestSnapshot(ws, repository);
  const truth = useArchitecture(ws, snapshot.data?.audit_id ?? '');
  const [form, setForm] = useState({
    title: '',
    question: '',
    context: '',
    relationship: '',
    a: '',
    b: '',
  });
  const set = (k: keyof typeof form) => (e: { target: { value: string } }) =>
    setForm({ ...form, [k]: e.target.value });
  const propose = useMutation({
    mutationFn: async () => {
      const rel = truth.data!.relationships.find((r) => r.canonical_key === form.relationship)!;
      return unwrap(
        await api.POST('/v1/workspaces/{workspace_id}/decisions', {
          params: { path: { workspace_id: ws } },
          body: {
            title: form.title,
            question: form.question,
            context: form.context,
            snapshot_id: snapshot.data!.id,
            owner_id: ownerId,
            options: [
              { id: 'a', title: form.a, description: form.a },
              { id: 'b', title: form.b, description: form.b },
            ],
            evidence_ids: rel.evidence_ids,
            uncertainties: [],
            success_criteria: [
              {
                id: 'relationship',
                description: `${rel.canonical_key} is present`,
                check: { kind: 'relationship_present', key: rel.canonical_key },
              },
            ],
            affected_relationship_keys: [rel.canonical_key],
          },
        }),
      );
    },
    onSuccess: () => {
      setForm({ title: '', question: '', context: '', relationship: '', a: '', b: '' });
      void client.invalidateQueries({ queryKey: keys.decisions(ws) });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    propose.mutate();
  };
  const usable = (truth.data?.relationships ?? []).filter((r) => r.evidence_ids.length > 0);
  return (
    <details className="propose">
      <summary>Propose a decision</summary>
      <form onSubmit={submit} aria-label="Propose a decision">
        <label htmlFor="p-repo">Repository</label>
        <select
          id="p-repo"
          value={repository}
          onChange={(e) => setRepository(e.target.value)}
          required
        >
          <option value="">Choose…</option>
          {(repos.data?.items ?? []).map((r) => (
            <option key={r.id} value={r.id}>
              {r.name}
            </option>
          ))}
        </select>
        <label htmlFor="p-rel">Evidence: the relationship it is about</label>
        <select id="p-rel" value={form.relationship} onChange={set('relationship')} required>
          <option value="">Choose…</option>
          {usable.map((r) => (
            <option key={r.canonical_key} value={r.canonical_key}>
              {r.canonical_key}
            </option>
          ))}
        </select>
        <label htmlFor="p-title">Title</label>
        <input id="p-title" value={form.title} onChange={set('title')} required minLength={3} />
        <label htmlFor="p-question">Question</label>
        <input
          id="p-question"
          value={form.question}
          onChange={set('question')}
          required
          minLength={3}
        />
        <label htmlFor="p-context">Context</label>
        <textarea
          id="p-context"
          value={form.context}
          onChange={set('context')}
          required
          minLength={3}
        />
        <label htmlFor="p-a">Option A</label>
        <input id="p-a" value={form.a} onChange={set('a')} required />
        <label htmlFor="p-b">Option B</label>
        <input id="p-b" value={form.b} onChange={set('b')} required />
        <button type="submit" disabled={propose.isPending || !snapshot.data || !truth.data}>
          Propose
        </button>
        {propose.isError && <Problem error={propose.error} />}
      </form>
    </details>
  );
}
