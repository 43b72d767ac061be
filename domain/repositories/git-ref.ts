/**
 * The one judge of the branch names and refs a client may ask us to audit: the API (audits,
 * profiles, schedules) refuses with it what the worker would refuse, and the worker checks with it
 * again before any git process runs. It follows git-check-ref-format(1); test/git-source.test.ts
 * holds it to git's own answers for a table of names.
 */

/** Longest branch name or ref accepted. */
export const MAX_REF_LENGTH = 1024;

/** The full ref a branch name or ref stands for: `refs/...` as is, else `refs/heads/<name>`. */
export function fullRefOf(branchRef: string): string {
  return branchRef.startsWith('refs/') ? branchRef : `refs/heads/${branchRef}`;
}

/** Whether an audited ref is another one than the repository's default branch (null: unnamed). */
export function isOtherBranch(branchRef: string | null, defaultBranch: string): boolean {
  return branchRef !== null && fullRefOf(branchRef) !== fullRefOf(defaultBranch);
}

/**
 * git's ref-name rules for a full ref; `branch` is the short name when the ref is a branch
 * (`refs/heads/<branch>`), which must also not be `HEAD` nor start with '-' (`--branch` rules).
 */
export function isValidRefName(fullRef: string, branch: string | null): boolean {
  if (branch !== null && (branch === 'HEAD' || branch.startsWith('-'))) return false;
  if (fullRef === '@' || !fullRef.includes('/')) return false;
  // Control characters, DEL, space, ~ ^ : ? * [ and backslash; `..` and `@{` anywhere.
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(fullRef)) return false;
  if (fullRef.includes('..') || fullRef.includes('@{')) return false;
  if (fullRef.endsWith('.')) return false;
  // No empty component (leading, trailing or doubled slash); none starts with '.' or ends with '.lock'.
  return fullRef
    .split('/')
    .every((part) => part !== '' && !part.startsWith('.') && !part.endsWith('.lock'));
}

/**
 * Why a branch name or ref (as a client gives it: `main`, `release/1.0`, `refs/tags/v1`) is not
 * acceptable, or null when it is. Option-like names (a leading '-') and revision syntax are refused
 * before git's own rules, so no such string ever reaches a git command line.
 */
export function refNameProblem(branchRef: string): string | null {
  if (branchRef === '') return 'is empty';
  if (branchRef.length > MAX_REF_LENGTH) return `is longer than ${MAX_REF_LENGTH} characters`;
  if (branchRef.startsWith('-')) return 'must not start with "-"';
  if (/[\x00-\x20\x7f~^:?*[\\]|@\{/.test(branchRef)) return 'contains a forbidden character';
  const fullRef = fullRefOf(branchRef);
  const branch = fullRef.startsWith('refs/heads/') ? fullRef.slice('refs/heads/'.length) : null;
  if (!isValidRefName(fullRef, branch)) return 'is not a valid git ref name';
  return null;
}
