/**
 * An audit: its stages live (polled every 1.5 s while it runs), its cost and agent runs, the
 * log with a level filter, the gate with its reasons, the report and its approval, the
 * downloads, and the way into the architecture explorer.
 */
import { useState } from 'react';
import { useAgentRuns, useAuditCost } from '../api/pages';
import { useAudit, useAuditLogs, useGate } from '../api/queries';
import type { Viewer } from '../App';
import { Badge, Loading, Problem, When, Table } from '../components';
import { Link, useTitle } from '../router';
import { ReportApproval } from './ReportApproval';

const FORMATS = [
  ['html', 'HTML report'],
  ['markdown', 'Markdown'],
  ['sarif', 'SARIF'],
  ['junit', 'JUnit XML'],
] as const;

export function AuditPage({ ws, id, viewer }: { ws: string; id: string; viewer: Viewer }) {
  useTitle('Audit');
  const audit = useAudit(ws, id);
  const live = audit.data ? ['queued', 'running'].includes(audit.data.status) : false;
  const logs = useAuditLogs(ws, id, live);
  const completed = audit.data?.status === 'completed';
  const gate = useGate(ws, id, completed);
  const cost = useAuditCost(ws, id, live);
  const runs = useAgentRuns(ws, id, live);
  const [level, setLevel] = useState('all');
  if (audit.isError) return <Problem error={audit.error} />;
  if (audit.isPending) return <Loading />;
  const a = audit.data;
  const lines = (logs.data?.items ?? []).filter((l) => level === 'all' || l.level === level);
  return (
    <>
      <p className="crumbs">
        <Link to={`/app/w/${ws}`}>Home</Link>
        {a.repository_id && (
          <>
            {' / '}
            <Link to={`/app/w/${ws}/r/${a.repository_id}`}>repository</Link>
          </>
        )}{' '}
        / audit
      </p>
      <h1>
        Audit <Badge value={a.status} />
      </h1>
      <p className="muted">
        Started <When at={a.created_at} /> · {a.origin}
        {a.branch_ref && (
          <>
            {' '}
            · branch <code>{a.branch_ref}</code>
          </>
        )}
        {a.commit_sha && (
          <>
            {' '}
            · commit <code>{a.commit_sha.slice(0, 12)}</code>
          </>
        )}
      </p>
      <section aria-labelledby="stages">
        <h2 id="stages">Stages</h2>
        <ol className="stages" aria-live="polite">
          {a.stages.map((s) => (
            <li key={s.key} data-stage={s.key} data-status={s.status}>
              <span className="stage-key">{s.key}</span> <Badge value={s.status} />
              {s.summary && <span className="muted"> {s.summary}</span>}
              {s.error_code && <code> {s.error_code}</code>}
            </li>
          ))}
        </ol>
      </section>
      <section aria-labelledby="cost">
        <h2 id="cost">Cost and agent runs</h2>
        {cost.data && (
          <p className="figures">
            <span>
              Cost <strong data-testid="cost-usd">${cost.data.cost_usd}</strong>
            </span>{' '}
            · <span>{cost.data.model_calls} model calls</span> ·{' '}
            <span>
              {cost.data.input_tokens} input tokens ({cost.data.cached_input_tokens} cached)
            </span>{' '}
            · <span>{cost.data.output_tokens} output tokens</span>
            {cost.data.models.length > 0 && <> · models {cost.data.models.join(', ')}</>}
            {a.scanner_only && <> · scanners only (no model-backed agent ran)</>}
          </p>
        )}
        {cost.isError && <Problem error={cost.error} />}
        {runs.data && runs.data.runs.length === 0 && (
          <p className="muted">No agent run{live ? ' yet' : ''}.</p>
        )}
        {runs.data && runs.data.runs.length > 0 && (
          <Table
            label="Agent runs table"
            columns={['Agent', 'Status', 'Model', 'Attempt', 'Tokens in / out', 'Cost', 'Artifact']}
          >
            {runs.data.runs.map((r) => (
              <tr key={r.id} data-agent={r.agent_key}>
                <th scope="row">
                  {r.agent_key} <span className="muted">{r.agent_version}</span>
                </th>
                <td>
                  <Badge value={r.status} />
                  {r.cache_hit && <> cached</>}
                  {r.error_code && <code> {r.error_code}</code>}
                </td>
                <td>{r.model_id}</td>
                <td className="num">{r.attempt}</td>
                <td className="num">
                  {r.input_tokens ?? 0} / {r.output_tokens ?? 0}
                </td>
                <td className="num">${r.cost_usd ?? '0'}</td>
                <td>
                  {r.artifact ? `${r.artifact.title} (confidence ${r.artifact.confidence})` : '—'}
                </td>
              </tr>
            ))}
          </Table>
        )}
      </section>
      {a.coverage_gaps.length > 0 && (
        <section aria-labelledby="gaps">
          <h2 id="gaps">Coverage gaps</h2>
          <ul>
            {a.coverage_gaps.map((g, i) => (
              <li key={i}>{JSON.stringify(g)}</li>
            ))}
          </ul>
        </section>
      )}
      {completed && (
        <section aria-labelledby="gate">
          <h2 id="gate">Gate</h2>
          {gate.data ? (
            <>
              <p>
                Outcome <Badge value={gate.data.outcome} />
              </p>
              {gate.data.reasons.length > 0 && (
                <ul>
                  {gate.data.reasons.map((r, i) => (
                    <li key={i}>
                      <Badge value={r.code} /> {r.text}
                    </li>
                  ))}
                </ul>
              )}
            </>
          ) : (
            <p className="muted">No gate for this audit.</p>
          )}
          <ReportApproval ws={ws} audit={id} viewer={viewer} />
          <h2>Architecture and downloads</h2>
          <p>
            <Link className="button" to={`/app/w/${ws}/a/${id}/graph`}>
              Open the architecture explorer
            </Link>
          </p>
          <ul className="downloads">
            {FORMATS.map(([format, label]) => (
              <li key={format}>
                <a href={`/v1/workspaces/${ws}/audits/${id}/report?format=${format}`} download>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </section>
      )}
      <section aria-labelledby="log">
        <h2 id="log">Log</h2>
        <label htmlFor="level">Level</label>{' '}
        <select id="level" value={level} onChange={(e) => setLevel(e.target.value)}>
          <option value="all">all</option>
          <option value="info">info</option>
          <option value="warning">warning</option>
          <option value="error">error</option>
        </select>
        <ol className="log" tabIndex={0} aria-label="Log lines">
          {lines.map((l, i) => (
            <li key={i} className={`log-${l.level}`}>
              <When at={l.occurred_at} /> <Badge value={l.level} /> {l.message}
            </li>
          ))}
        </ol>
      </section>
    </>
  );
}
