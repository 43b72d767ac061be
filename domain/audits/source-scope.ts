/** AuditSourceScope applied to a list of paths: include/exclude globs, then max_files. */
import picomatch from 'picomatch';

export interface ScopeInput {
  include?: string[];
  exclude?: string[];
  max_files?: number;
}

export interface ScopeFilter {
  accepts(path: string): boolean;
  maxFiles: number | null;
}

export function scopeFilter(scope: ScopeInput): ScopeFilter {
  const opts = { dot: true };
  const include = scope.include?.length ? picomatch(scope.include, opts) : () => true;
  const exclude = scope.exclude?.length ? picomatch(scope.exclude, opts) : () => false;
  return { accepts: (p) => include(p) && !exclude(p), maxFiles: scope.max_files ?? null };
}

/**
 * Whether an audit with this scope read the whole repository: no include or exclude globs, every
 * source type, no file cap. Only such an audit can say a finding is gone everywhere (or still
 * there for the same reason), so only it verifies a remediation.
 */
export function coversWholeRepository(
  scope: ScopeInput & { source_types?: readonly string[] },
  allSourceTypes: readonly string[],
): boolean {
  if (scope.include?.length || scope.exclude?.length || scope.max_files !== undefined) return false;
  const types = scope.source_types;
  return !types || allSourceTypes.every((t) => types.includes(t));
}

/**
 * The repository whose architecture history an audit's snapshot joins: a repository audit's.
 * An upload audit may name the repository its findings belong to (createAudit with upload_id
 * and repository_id), but an uploaded folder is not known to be that repository at any commit:
 * its snapshot stays its own (not the repository's latest architecture, no baseline, no change
 * set, no version in the repository's sequence, no ingested evidence of the repository).
 */
export function architectureRepositoryOf(audit: {
  audit_type: string;
  repository_id: string | null;
}): string | null {
  return audit.audit_type === 'repository' ? audit.repository_id : null;
}
