/** Findings of the workspace, filtered by severity and status, with their locations. */
import { useState } from 'react';
import { useFindings } from '../api/queries';
import { Badge, Loading, Problem } from '../components';
import { useTitle } from '../router';

export function Findings({ ws }: { ws: string }) {
  useTitle('Findings');
  const findings = useFindings(ws);
  const [severity, setSeverity] = useState('all');
  const [status, setStatus] = useState('open');
  if (findings.isError) return <Problem error={findings.error} />;
  if (findings.isPending) return <Loading />;
  const items = findings.data.items.filter(
    (f) =>
      (severity === 'all' || f.severity === severity) && (status === 'all' || f.status === status),
  );
  return (
    <>
      <h1>Findings</h1>
      <div className="filters">
        <label>
          Severity{' '}
          <select value={severity} onChange={(e) => setSeverity(e.target.value)}>
            {['all', 'high', 'medium', 'low'].map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          Status{' '}
          <select value={status} onChange={(e) => setStatus(e.target.value)}>
            {['all', 'open', 'accepted_risk', 'false_positive', 'resolved'].map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
      </div>
      {items.length === 0 && <p className="muted">No finding matches.</p>}
      <ul className="findings">
        {items.map((f) => (
          <li key={f.id} className="card">
            <h2>{f.title}</h2>
            <p>
              <Badge value={f.severity} /> <Badge value={f.status} /> <code>{f.control_key}</code>
            </p>
            <p>{f.detail}</p>
            {f.locations.length > 0 && (
              <ul>
                {f.locations.map((l, i) => (
                  <li key={i}>
                    <code>{JSON.stringify(l)}</code>
                  </li>
                ))}
              </ul>
            )}
          </li>
        ))}
      </ul>
    </>
  );
}
