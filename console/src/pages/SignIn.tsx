/** Not signed in: the existing sign-in page (which comes back here), or the public demo. */
import { useTitle } from '../router';

export function SignIn() {
  useTitle('Sign in');
  return (
    <main id="main" className="narrow">
      <h1>archaudit console</h1>
      <p>See your systems as they really are: every claim with its file, lines and hash.</p>
      <p>
        <a className="button" href={`/session/sign-in?return_to=${encodeURIComponent('/app/')}`}>
          Sign in
        </a>
      </p>
      <p className="muted">
        Or <a href="/app/demo">browse the public demo</a> (read-only, when the operator has enabled
        it).
      </p>
    </main>
  );
}
