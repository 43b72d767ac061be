/**
 * What a member's role allows them to delegate (to an OAuth client through consent): owners and
 * admins every scope; members everything but the approvals and the gate policy. The spec gives
 * roles no scopes; this is our rule (docs/decisions.md).
 */
import { SCOPES, type ScopeName } from '../contract/values';

const MEMBER_EXCLUDED: ReadonlySet<ScopeName> = new Set<ScopeName>([
  'decisions:approve',
  'reports:approve',
  'remediations:approve',
  'workflow_actions:approve',
  'policies:write',
]);

export function roleScopes(role: string): ScopeName[] {
  if (role === 'owner' || role === 'admin') return [...SCOPES];
  if (role === 'member') return SCOPES.filter((s) => !MEMBER_EXCLUDED.has(s));
  return [];
}
