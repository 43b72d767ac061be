/**
 * Routing of the console: paths under /app/, matched against a short table, with the History
 * API. (A router library's nested layouts and loaders would be unused here: each page reads
 * its data through TanStack Query; see docs/decisions.md.)
 */
import { useEffect, useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';

export type Route =
  | { page: 'home'; ws?: string }
  | { page: 'repository'; ws: string; repo: string }
  | { page: 'audit'; ws: string; audit: string }
  | { page: 'explorer'; ws: string; audit: string }
  | { page: 'decisions'; ws: string }
  | { page: 'uncertainty'; ws: string }
  | { page: 'findings'; ws: string }
  | { page: 'tokens'; ws: string }
  | { page: 'remediations'; ws: string; remediation?: string }
  | { page: 'workflow-actions'; ws: string }
  | { page: 'grants'; ws: string }
  | { page: 'assistant'; ws: string }
  | { page: 'not-found' };

const ID = '([0-9a-f-]{36})';
const TABLE: Array<[RegExp, (m: string[]) => Route]> = [
  [/^\/app\/?$/, () => ({ page: 'home' })],
  [new RegExp(`^/app/w/${ID}/?$`), (m) => ({ page: 'home', ws: m[1]! })],
  [new RegExp(`^/app/w/${ID}/r/${ID}$`), (m) => ({ page: 'repository', ws: m[1]!, repo: m[2]! })],
  [new RegExp(`^/app/w/${ID}/a/${ID}$`), (m) => ({ page: 'audit', ws: m[1]!, audit: m[2]! })],
  [
    new RegExp(`^/app/w/${ID}/a/${ID}/graph$`),
    (m) => ({ page: 'explorer', ws: m[1]!, audit: m[2]! }),
  ],
  [new RegExp(`^/app/w/${ID}/decisions$`), (m) => ({ page: 'decisions', ws: m[1]! })],
  [new RegExp(`^/app/w/${ID}/uncertainty$`), (m) => ({ page: 'uncertainty', ws: m[1]! })],
  [new RegExp(`^/app/w/${ID}/findings$`), (m) => ({ page: 'findings', ws: m[1]! })],
  [new RegExp(`^/app/w/${ID}/tokens$`), (m) => ({ page: 'tokens', ws: m[1]! })],
  [new RegExp(`^/app/w/${ID}/remediations$`), (m) => ({ page: 'remediations', ws: m[1]! })],
  [
    new RegExp(`^/app/w/${ID}/remediations/${ID}$`),
    (m) => ({ page: 'remediations', ws: m[1]!, remediation: m[2]! }),
  ],
  [new RegExp(`^/app/w/${ID}/actions$`), (m) => ({ page: 'workflow-actions', ws: m[1]! })],
  [new RegExp(`^/app/w/${ID}/grants$`), (m) => ({ page: 'grants', ws: m[1]! })],
  [new RegExp(`^/app/w/${ID}/assistant$`), (m) => ({ page: 'assistant', ws: m[1]! })],
];

export function match(path: string): Route {
  for (const [re, make] of TABLE) {
    const m = re.exec(path);
    if (m) return make(m);
  }
  return { page: 'not-found' };
}

const listeners = new Set<() => void>();
function subscribe(fn: () => void) {
  listeners.add(fn);
  window.addEventListener('popstate', fn);
  return () => {
    listeners.delete(fn);
    window.removeEventListener('popstate', fn);
  };
}

export function navigate(to: string): void {
  window.history.pushState(null, '', to);
  for (const fn of listeners) fn();
}

export function usePath(): string {
  return useSyncExternalStore(subscribe, () => window.location.pathname);
}

/** A link that navigates inside the console without a page load (and as a link with a modifier). */
export function Link(props: AnchorHTMLAttributes<HTMLAnchorElement> & { to: string }) {
  const { to, ...rest } = props;
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    navigate(to);
  };
  return <a {...rest} href={to} onClick={onClick} />;
}

/** Sets the document title (each page names itself for screen readers and history). */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · archaudit`;
  }, [title]);
}
