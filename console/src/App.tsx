/** The shell: who is signed in, the workspace, the navigation, and the page of the path. */
import { lazy, Suspense, useEffect } from 'react';
import { setCsrfToken } from './api/client';
import { useCaller } from './api/queries';
import { Link, match, navigate, usePath, type Route } from './router';
import { Loading, Problem } from './components';

/** The explorer's code (React Flow, ELK), loaded when opened: the first page stays small. */
export const loadExplorer = () => import('./pages/Explorer').then((m) => ({ default: m.Explorer }));
const Explorer = lazy(loadExplorer);
import { Home } from './pages/Home';
import { RepositoryPage } from './pages/Repository';
import { AuditPage } from './pages/Audit';
import { Decisions } from './pages/Decisions';
import { Uncertainty } from './pages/Uncertainty';
import { Findings } from './pages/Findings';
import { Tokens } from './pages/Tokens';
import { SignIn } from './pages/SignIn';
import { Remediations } from './pages/Remediations';
import { WorkflowActions } from './pages/WorkflowActions';
import { Grants } from './pages/Grants';
import { Assistant } from './pages/Assistant';

export interface Viewer {
  /** The member's id, null in the public demo (no session). */
  memberId: string | null;
  login: string | null;
  /** Whether writes may be offered (a session; never the public demo). */
  canWrite: boolean;
  scopes: ReadonlySet<string>;
}

function workspaceOf(route: Route): string | undefined {
  return 'ws' in route ? route.ws : undefined;
}

export function App() {
  const path = usePath();
  const route = match(path);
  const caller = useCaller();
  useEffect(() => setCsrfToken(caller.data?.csrf_token ?? null), [caller.data]);

  if (caller.isPending) return <p className="loading">Loading…</p>;
  if (caller.isError) return <Problem error={caller.error} />;
  const me = caller.data;
  let ws = workspaceOf(route);
  if (me && !ws) ws = me.workspaces[0]?.id;
  // Not signed in: only a workspace in the path (the public demo) can be browsed.
  if (!me && !ws) return <SignIn />;
  const role = me?.workspaces.find((w) => w.id === ws)?.role;
  const viewer: Viewer = {
    memberId: me?.member_id ?? null,
    login: me?.login ?? null,
    canWrite: me?.credential === 'session',
    // A session acts with its role's scopes in each workspace (owners and admins every scope).
    scopes: new Set(
      me
        ? role === 'member'
          ? me.scopes.filter((s) => !s.endsWith(':approve') && s !== 'policies:write')
          : me.scopes
        : [],
    ),
  };
  const base = `/app/w/${ws}`;
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <Link to={base} className="brand">
          archaudit
        </Link>
        <nav aria-label="Workspace">
          <Link to={base}>Home</Link>
          <Link to={`${base}/findings`}>Findings</Link>
          <Link to={`${base}/remediations`}>Remediations</Link>
          <Link to={`${base}/decisions`}>Decisions</Link>
          <Link to={`${base}/uncertainty`}>Uncertainty</Link>
          <Link to={`${base}/actions`}>Workflow actions</Link>
          {viewer.canWrite && <Link to={`${base}/assistant`}>Assistant</Link>}
          {viewer.canWrite && <Link to={`${base}/tokens`}>Tokens</Link>}
          {viewer.canWrite && <Link to={`${base}/grants`}>OAuth grants</Link>}
        </nav>
        <div className="who">
          {me ? (
            <>
              {me.workspaces.length > 1 && (
                <label>
                  <span className="sr-only">Workspace</span>
                  <select value={ws} onChange={(e) => navigate(`/app/w/${e.target.value}`)}>
                    {me.workspaces.map((w) => (
                      <option key={w.id} value={w.id}>
                        {w.name}
                      </option>
                    ))}
                  </select>
                </label>
              )}
              <a href="/session">{me.login}</a>
            </>
          ) : (
            <>
              <span className="badge">Public demo · read-only</span>
              <a href={`/session/sign-in?return_to=${encodeURIComponent('/app/')}`}>Sign in</a>
            </>
          )}
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <Page route={route} ws={ws!} viewer={viewer} />
      </main>
    </>
  );
}

function Page({ route, ws, viewer }: { route: Route; ws: string; viewer: Viewer }) {
  switch (route.page) {
    case 'home':
      return <Home ws={ws} viewer={viewer} />;
    case 'repository':
      return <RepositoryPage ws={ws} id={route.repo} viewer={viewer} />;
    case 'audit':
      return <AuditPage ws={ws} id={route.audit} viewer={viewer} />;
    case 'explorer':
      return (
        <Suspense fallback={<Loading />}>
          <Explorer ws={ws} audit={route.audit} />
        </Suspense>
      );
    case 'decisions':
      return <Decisions ws={ws} viewer={viewer} />;
    case 'uncertainty':
      return <Uncertainty ws={ws} viewer={viewer} />;
    case 'findings':
      return <Findings ws={ws} viewer={viewer} />;
    case 'tokens':
      return <Tokens ws={ws} viewer={viewer} />;
    case 'remediations':
      return <Remediations ws={ws} viewer={viewer} selected={route.remediation ?? null} />;
    case 'workflow-actions':
      return <WorkflowActions ws={ws} viewer={viewer} />;
    case 'grants':
      return <Grants ws={ws} />;
    case 'assistant':
      return <Assistant ws={ws} viewer={viewer} />;
    case 'not-found':
      return (
        <section>
          <h1>Not found</h1>
          <p>
            Nothing lives at this address. <Link to="/app/">Go home</Link>.
          </p>
        </section>
      );
  }
}
