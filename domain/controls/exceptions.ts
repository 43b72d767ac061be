/**
 * Which control exception covers an assessment. An exception waives one control for the whole
 * workspace, one repository, or one entity or relationship of a repository; it applies while
 * it is neither expired nor revoked, from the next audit on. The narrowest covering exception
 * wins (entity, then repository, then workspace; then the lowest id). Pure.
 */
export const EXCEPTION_SCOPES = ['workspace', 'repository', 'entity'] as const;
export type ExceptionScope = (typeof EXCEPTION_SCOPES)[number];

export interface ControlException {
  id: string;
  control_key: string;
  scope: ExceptionScope;
  repository_id: string | null;
  subject_key: string | null;
  expires_at: Date;
  revoked_at: Date | null;
}

export interface ExceptedAssessment {
  control_key: string;
  /** Entity keys of its findings and keys of the relationships it used. */
  subject_keys: readonly string[];
}

const RANK: Record<ExceptionScope, number> = { entity: 0, repository: 1, workspace: 2 };

export function exceptionState(e: ControlException, at: Date): 'active' | 'expired' | 'revoked' {
  if (e.revoked_at) return 'revoked';
  return e.expires_at.getTime() > at.getTime() ? 'active' : 'expired';
}

export function coveringException(
  assessment: ExceptedAssessment,
  repositoryId: string | null,
  exceptions: readonly ControlException[],
  at: Date,
): ControlException | null {
  const covering = exceptions.filter((e) => {
    if (e.control_key !== assessment.control_key || exceptionState(e, at) !== 'active')
      return false;
    if (e.scope === 'workspace') return true;
    if (!repositoryId || e.repository_id !== repositoryId) return false;
    if (e.scope === 'repository') return true;
    return e.subject_key !== null && assessment.subject_keys.includes(e.subject_key);
  });
  covering.sort((a, b) => RANK[a.scope] - RANK[b.scope] || (a.id < b.id ? -1 : 1));
  return covering[0] ?? null;
}
