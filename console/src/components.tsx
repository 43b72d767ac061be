/** Small pieces every page uses: problems, status badges, dates, the pending state. */
import { ProblemError } from './api/client';

export function Problem({ error }: { error: unknown }) {
  const p = error instanceof ProblemError ? error : null;
  return (
    <div className="problem" role="alert">
      <strong>{p ? `${p.message}` : 'Something went wrong.'}</strong>
      {p?.hint && <p>{p.hint}</p>}
      {p && <code>{p.code}</code>}
    </div>
  );
}

export function Badge({ value }: { value: string | null | undefined }) {
  if (!value) return <span className="badge">—</span>;
  return (
    <span className={`badge badge-${value.replace(/[^a-z_]/g, '')}`}>
      {value.replace(/_/g, ' ')}
    </span>
  );
}

export function When({ at }: { at: string | null | undefined }) {
  if (!at) return <span>—</span>;
  return <time dateTime={at}>{new Date(at).toLocaleString()}</time>;
}

export function Loading() {
  return (
    <p className="loading" role="status">
      Loading…
    </p>
  );
}
