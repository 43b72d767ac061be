/**
 * The explorer's details panel: an entity (attributes, confidence, sources, contradictions, how
 * it differs from the compared snapshot, and its upstream and downstream entities as buttons
 * that walk the paths by keyboard, the findings and decisions about it, each a link to its page) or
 * a relationship with its evidence, each item with its file,
 * line range, the cited lines syntax-highlighted, its SHA-256 and whether it still verifies.
 */
import { useEffect, useState } from 'react';
import { useEvidence } from '../api/queries';
import { Badge, Loading, Problem, When } from '../components';
import { Link } from '../router';
import { DIFF_LEGEND, type DiffStatus, type Entity, type Relationship } from './compare';
import type { Token } from './highlight';
import { useAuditFindings, useEntityHistory, useRepositoryDecisions } from './queries';

const LISTED = 40;

function DiffNote({ status, fields }: { status: DiffStatus | undefined; fields?: string[] }) {
  if (!status || status === 'same') return null;
  const { symbol, label } = DIFF_LEGEND[status];
  return (
    <p className={`diff-note diff-${status}`}>
      <span aria-hidden="true">{symbol} </span>
      Compared snapshot: {label}
      {fields?.length ? ` (${fields.join(', ')})` : ''}
    </p>
  );
}

function Related({
  title,
  keys,
  names,
  onPick,
}: {
  title: string;
  keys: string[];
  names: Map<string, string>;
  onPick: (key: string) => void;
}) {
  return (
    <section aria-label={title}>
      <h3>
        {title} ({keys.length})
      </h3>
      {keys.length === 0 ? (
        <p className="muted">None.</p>
      ) : (
        <ul className="related">
          {keys.slice(0, LISTED).map((k) => (
            <li key={k}>
              <button type="button" className="link" onClick={() => onPick(k)}>
                {names.get(k) ?? k}
              </button>
            </li>
          ))}
          {keys.length > LISTED && <li className="muted">and {keys.length - LISTED} more</li>}
        </ul>
      )}
    </section>
  );
}

const CHANGE_WORDS: Record<string, string> = {
  added: 'added',
  changed: 'changed',
  unchanged: 'unchanged',
  removed: 'removed',
  absent: 'not there',
};

/** The entity in each snapshot of the repository (getEntityHistory), this audit's marked. */
function History({
  ws,
  repository,
  audit,
  entityKey,
}: {
  ws: string;
  repository: string | null;
  audit: string;
  entityKey: string;
}) {
  const history = useEntityHistory(ws, repository, entityKey);
  if (!repository) return null;
  return (
    <section aria-label="History">
      <h3>History across snapshots</h3>
      {history.isPending && <Loading />}
      {history.isError && <Problem error={history.error} />}
      {history.data && (
        <ol className="history">
          {history.data.items.map((i) => (
            <li key={i.snapshot_id} data-change={i.change}>
              <When at={i.generated_at} />
              {i.commit_sha && <code> {i.commit_sha.slice(0, 8)}</code>}:{' '}
              <strong>{CHANGE_WORDS[i.change] ?? i.change}</strong>
              {i.changed_fields.length > 0 && ` (${i.changed_fields.join(', ')})`}
              {i.present && ` · ${i.relationship_count} relationships`}
              {i.audit_id === audit && <span className="muted"> · this snapshot</span>}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

/**
 * The findings this audit observed about the entity, and the decisions that name it or one of
 * its relationships, each a link to its page. Both read one bounded page (200 findings of the
 * audit, 100 decisions of the repository) and filter it here; more is said when it may be cut.
 */
function Linked({
  ws,
  repository,
  audit,
  entityKey,
  relationshipKeys,
}: {
  ws: string;
  repository: string | null;
  audit: string;
  entityKey: string;
  relationshipKeys: string[];
}) {
  const findings = useAuditFindings(ws, audit);
  const decisions = useRepositoryDecisions(ws, repository);
  const touching = new Set(relationshipKeys);
  const mine = (findings.data?.items ?? []).filter((f) => f.entity_key === entityKey);
  const named = (decisions.data?.items ?? []).filter(
    (d) =>
      d.affected_entity_keys.includes(entityKey) ||
      d.affected_relationship_keys.some((k) => touching.has(k)),
  );
  return (
    <>
      <section aria-label="Findings">
        <h3>Findings{findings.data ? ` (${mine.length})` : ''}</h3>
        {findings.isPending && <Loading />}
        {findings.isError && <Problem error={findings.error} />}
        {findings.data &&
          (mine.length === 0 ? (
            <p className="muted">None in this audit.</p>
          ) : (
            <ul className="related">
              {mine.slice(0, LISTED).map((f) => (
                <li key={f.id}>
                  <Badge value={f.severity} />{' '}
                  <Link to={`/app/w/${ws}/findings#${f.id}`}>{f.title}</Link>{' '}
                  <span className="muted">{f.status.replace('_', ' ')}</span>
                </li>
              ))}
              {mine.length > LISTED && <li className="muted">and {mine.length - LISTED} more</li>}
            </ul>
          ))}
        {findings.data?.next_cursor && (
          <p className="muted">Only the audit’s first 200 findings were searched.</p>
        )}
      </section>
      <section aria-label="Decisions">
        <h3>Decisions{decisions.data ? ` (${named.length})` : ''}</h3>
        {decisions.isPending && <Loading />}
        {decisions.isError && <Problem error={decisions.error} />}
        {decisions.data &&
          (named.length === 0 ? (
            <p className="muted">None.</p>
          ) : (
            <ul className="related">
              {named.slice(0, LISTED).map((d) => (
                <li key={d.id}>
                  <Badge value={d.status} />{' '}
                  <Link to={`/app/w/${ws}/decisions#${d.id}`}>{d.title}</Link>
                </li>
              ))}
              {named.length > LISTED && <li className="muted">and {named.length - LISTED} more</li>}
            </ul>
          ))}
      </section>
    </>
  );
}

export function EntityPanel({
  ws,
  repository,
  audit,
  entity,
  status,
  fields,
  upstream,
  downstream,
  relationshipKeys,
  names,
  onPick,
}: {
  ws: string;
  repository: string | null;
  audit: string;
  entity: Entity;
  status?: DiffStatus;
  fields?: string[];
  upstream: string[];
  downstream: string[];
  /** The relationships of the snapshot from or to the entity (decisions may name those). */
  relationshipKeys: string[];
  names: Map<string, string>;
  onPick: (key: string) => void;
}) {
  return (
    <>
      <h2>{entity.name}</h2>
      <DiffNote status={status} fields={fields} />
      <p>
        <Badge value={entity.kind} /> confidence {entity.confidence} · sources{' '}
        {entity.sources.join(', ')}
      </p>
      <p>
        <code>{entity.canonical_key}</code>
      </p>
      {Object.keys(entity.attributes).length > 0 && (
        <pre className="attrs" tabIndex={0} aria-label="Attributes">
          {JSON.stringify(entity.attributes, null, 2)}
        </pre>
      )}
      {entity.contradictions.length > 0 && (
        <>
          <h3>Contradictions</h3>
          <ul>
            {entity.contradictions.map((c, i) => (
              <li key={i}>{JSON.stringify(c)}</li>
            ))}
          </ul>
        </>
      )}
      <Related title="Upstream" keys={upstream} names={names} onPick={onPick} />
      <Related title="Downstream" keys={downstream} names={names} onPick={onPick} />
      <Linked
        ws={ws}
        repository={repository}
        audit={audit}
        entityKey={entity.canonical_key}
        relationshipKeys={relationshipKeys}
      />
      <History ws={ws} repository={repository} audit={audit} entityKey={entity.canonical_key} />
    </>
  );
}

export function EdgePanel({
  ws,
  audit,
  relationship,
  status,
  fields,
}: {
  ws: string;
  /** The audit whose snapshot holds the relationship (the compared one for a removed edge). */
  audit: string;
  relationship: Relationship;
  status?: DiffStatus;
  fields?: string[];
}) {
  return (
    <>
      <h2>
        {relationship.kind}: {relationship.source_key} → {relationship.target_key}
      </h2>
      <DiffNote status={status} fields={fields} />
      <p>
        confidence {relationship.confidence} · sources {relationship.sources.join(', ')}
      </p>
      <h3>Evidence ({relationship.evidence_ids.length})</h3>
      {relationship.evidence_ids.map((id) => (
        <EvidenceItem key={id} ws={ws} audit={audit} id={id} />
      ))}
    </>
  );
}

/** The cited lines, highlighted once the highlighter (its own chunk) has loaded. */
function CitedLines({
  path,
  lines,
}: {
  path: string | null;
  lines: Array<{ number: number; text: string }>;
}) {
  const [tokens, setTokens] = useState<Token[][] | null>(null);
  useEffect(() => {
    let live = true;
    void import('./highlight').then((m) => {
      if (live)
        setTokens(
          m.highlightLines(
            path,
            lines.map((l) => l.text),
          ),
        );
    });
    return () => {
      live = false;
    };
  }, [path, lines]);
  return (
    <pre
      className="cited"
      aria-label="Cited lines"
      tabIndex={0}
      data-highlighted={tokens ? 'true' : 'false'}
    >
      {lines.map((l, i) => (
        <span key={l.number} className="cited-line">
          <span className="ln" aria-hidden="true">
            {l.number}
          </span>
          {tokens?.[i]
            ? tokens[i].map((t, j) =>
                t.className ? (
                  <span key={j} className={t.className}>
                    {t.text}
                  </span>
                ) : (
                  t.text
                ),
              )
            : l.text}
          {'\n'}
        </span>
      ))}
    </pre>
  );
}

function EvidenceItem({ ws, audit, id }: { ws: string; audit: string; id: string }) {
  const ev = useEvidence(ws, audit, id);
  if (ev.isPending) return <Loading />;
  if (ev.isError) return <Problem error={ev.error} />;
  const e = ev.data;
  return (
    <article className="evidence" data-verification={e.verification}>
      <p>
        <strong>{e.evidence.summary}</strong>
      </p>
      <p>
        <code className="path">{e.path ?? 'no location'}</code>
        {e.start_line !== null && (
          <>
            {' '}
            lines {e.start_line}–{e.end_line}
          </>
        )}
      </p>
      {e.lines.length > 0 && <CitedLines path={e.path} lines={e.lines} />}
      {e.lines_truncated && (
        <p className="muted">The range is longer; its first lines are shown.</p>
      )}
      <p className="hash">
        SHA-256 <code>{e.evidence.content_sha256}</code> <Badge value={e.verification} />
      </p>
    </article>
  );
}
