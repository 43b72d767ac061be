/** What each of the 25 scopes (spec section 5) lets a token do; served by listScopes. */
import type { ScopeName } from '../../api/schemas';

export const SCOPE_DESCRIPTIONS: Readonly<Record<ScopeName, string>> = {
  'audits:read':
    'Read audits, their stages, logs, costs, agent runs, architecture, profiles and schedules.',
  'audits:write': 'Start, cancel and retry audits; manage audit profiles and schedules.',
  'decisions:approve': 'Approve or reject architecture decisions.',
  'decisions:read': 'Read architecture decisions and their briefs.',
  'decisions:write': 'Propose architecture decisions and move them through their lifecycle.',
  'evidence:write': 'Ingest external evidence and record architecture change sets.',
  'exports:write': 'Export audit results.',
  'findings:read': 'Read findings and uncertainty cases.',
  'findings:write': 'Triage findings and update uncertainty cases.',
  'ingestion:read': 'Read evidence ingestion records.',
  'members:read': 'Read workspace members, API tokens, activity and audit events.',
  'policies:read': 'Read controls, control assessments and the change-gate policy.',
  'policies:write': 'Change the change-gate policy and grant control exceptions.',
  'remediations:approve': 'Approve remediation plans.',
  'remediations:read': 'Read remediation plans.',
  'remediations:write': 'Create remediation plans.',
  'reports:approve': 'Approve audit reports.',
  'reports:read': 'Read audit reports.',
  'repositories:read': 'Read workspaces and repositories.',
  'repositories:write': 'Register, update and delete repositories.',
  'uploads:write': 'Upload source archives and manage attachments.',
  'usage:read': 'Read usage, cost and assistant quotas.',
  'workflow_actions:approve': 'Approve requested workflow actions.',
  'workflow_actions:read': 'Read workflow actions.',
  'workflow_actions:request': 'Request workflow actions.',
};
