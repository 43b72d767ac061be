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
