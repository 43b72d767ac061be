/** Small pieces every page uses: problems, status badges, dates, the pending state. */
import { useEffect } from 'react';
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

/**
 * Once the page's list is shown (`ready`), the element the address's #fragment names (a link
 * from another page, e.g. the explorer's linked findings and decisions) is scrolled to and takes
 * the focus (give it tabIndex={-1}).
 */
export function useHashTarget(ready: boolean): void {
  useEffect(() => {
    if (!ready) return;
    const id = decodeURIComponent(window.location.hash.slice(1));
    const el = id ? document.getElementById(id) : null;
    if (!el) return;
    el.scrollIntoView({ block: 'start' });
    el.focus({ preventScroll: true });
  }, [ready]);
}
