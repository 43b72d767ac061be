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
