/**
 * What a control leaves out on purpose, said in its applicability_rationale so a reviewer sees
 * why a subject was not assessed: Dockerfiles that are never deployed, placeholder values,
 * units with nothing to lock.
 */
import { uniqueSorted } from '../shared/text';
import { ofKind, type Context } from './check';
import { composeOutOfScope } from './containers';
import { composeScope, outOfScopeDockerfiles } from './effective';
import { placeholderNote } from './placeholders';

/** Units whose lock question does not apply (`dir (why)`). */
function unlockable(ctx: Context): string[] {
  return uniqueSorted(
    ofKind(ctx, 'unit-declared')
      .filter((e) => typeof e.attributes.lockfile_not_applicable === 'string')
      .map((e) => `${e.subject_key} (${String(e.attributes.lockfile_not_applicable)})`),
  );
}

const list = (items: string[]): string =>
  `${items.slice(0, 20).join(', ')}${items.length > 20 ? `, and ${items.length - 20} more` : ''}`;

/** `; ...` to append to a control's applicability_rationale (empty when nothing is left out). */
export function scopeNote(key: string, ctx: Context): string {
  if (key === 'containers-non-root') {
    const out = outOfScopeDockerfiles(ctx);
    return out.length ? `; not deployed, so out of scope: ${list(out)}` : '';
  }
  if (key === 'containers-not-privileged' || key === 'containers-resource-limits') {
    const out = composeOutOfScope(ctx);
    return out.length ? `; not deployed as written, so not judged on its own: ${list(out)}` : '';
  }
  if (key === 'lockfile-present') {
    const out = unlockable(ctx);
    return out.length ? `; nothing to lock, not applicable: ${list(out)}` : '';
  }
  if (key === 'no-committed-secrets') {
    // The credentials of a test compose file's throwaway containers guard nothing deployed.
    const out = uniqueSorted(
      ofKind(ctx, 'literal-secret')
        .map((e) => e.location.path)
        .filter((p) => composeScope(p) !== null),
    );
    const tests = out.length ? `; test files, not applicable: ${list(out)}` : '';
    return tests + placeholderNote(key, ctx);
  }
  return placeholderNote(key, ctx);
}
