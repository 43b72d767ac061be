/** Small pieces every page uses: problems, status badges, dates, the pending state. */
import { useEffect, type FormEvent, type ReactNode } from 'react';
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

/**
 * The messages of a problem's validation errors naming the body value at `path` (a JSON
 * Pointer) or a part of it (an item of a list).
 */
function fieldMessages(error: unknown, path: string): string[] {
  if (!(error instanceof ProblemError)) return [];
  return error.errors
    .filter((e) => e.in === 'body' && (e.path === path || e.path.startsWith(`${path}/`)))
    .map((e) => e.message);
}

/**
 * A labelled form control with the API's problems that name its value (`path`, a JSON Pointer
 * into the request body) shown under it and tied to it (aria-invalid, aria-describedby).
 */
export function Field({
  id,
  label,
  error,
  path,
  wide = false,
  children,
}: {
  id: string;
  label: ReactNode;
  error: unknown;
  path: string;
  /** Across the whole form (a long text, a select of long names). */
  wide?: boolean;
  children: (control: {
    id: string;
    'aria-invalid'?: true;
    'aria-describedby'?: string;
  }) => ReactNode;
}) {
  const messages = fieldMessages(error, path);
  const invalid = messages.length > 0;
  return (
    <div className={wide ? 'field wide' : 'field'}>
      <label htmlFor={id}>{label}</label>
      {children(
        invalid ? { id, 'aria-invalid': true, 'aria-describedby': `${id}-problem` } : { id },
      )}
      {invalid && (
        <p className="field-problem" id={`${id}-problem`}>
          {path.slice(1)} {messages.join('; ')}
        </p>
      )}
    </div>
  );
}

/** A text input as a Field. */
export function TextField({
  value,
  onChange,
  ...field
}: {
  id: string;
  label: ReactNode;
  error: unknown;
  path: string;
  value: string;
  onChange: (value: string) => void;
}) {
  return (
    <Field {...field}>
      {(c) => <input {...c} value={value} onChange={(e) => onChange(e.target.value)} />}
    </Field>
  );
}

/**
 * A creation form folded in a card: its fields, the submit button, the API's problem (each
 * field shows its own) and, once done, what was made.
 */
export function FormCard({
  title,
  submit,
  action,
  done,
  children,
}: {
  title: string;
  submit: string;
  action: { mutate: () => void; isPending: boolean; isError: boolean; error: unknown };
  done: string | null;
  children: ReactNode;
}) {
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    action.mutate();
  };
  return (
    <details className="card">
      <summary>{title}</summary>
      <form onSubmit={onSubmit} aria-label={title} className="grid-form">
        {children}
        <button type="submit" disabled={action.isPending}>
          {submit}
        </button>
        {action.isError && <Problem error={action.error} />}
        {done && <p role="status">{done}</p>}
      </form>
    </details>
  );
}

/** A table in a scrollable region the keyboard reaches (named `label`), with its column heads. */
export function Table({
  label,
  columns,
  children,
}: {
  label: string;
  /** The column heads; a false one is left out (a column shown only to some). */
  columns: Array<ReactNode | false>;
  children: ReactNode;
}) {
  return (
    <div className="scroll" tabIndex={0} role="region" aria-label={label}>
      <table>
        <thead>
          <tr>
            {columns
              .filter((c) => c !== false)
              .map((c, i) => (
                <th scope="col" key={i}>
                  {c}
                </th>
              ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
