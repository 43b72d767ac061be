/** Audit profiles. */
import { Type, type Static } from '@sinclair/typebox';
import { AuditSourceScope } from '../audits/schemas';
import { Strict, Uuid, Version } from '../schema-kit';
import { CursorPage, ResourceParams, WorkspaceRecord, Timestamps } from '../schema-parts';

const name = () => Type.String({ minLength: 1, maxLength: 100, description: 'Profile name.' });
const branchRef = () =>
  Type.String({ minLength: 1, maxLength: 500, description: 'Branch or ref to audit.' });
const purpose = () => Type.Optional(Type.String({ maxLength: 500, default: '' }));

export const AuditProfileFields = Strict(
  'AuditProfileFields',
  {
    name: name(),
    branch_ref: branchRef(),
    purpose: purpose(),
    source_scope: Type.Optional(AuditSourceScope),
  },
  { description: 'Fields of an audit profile (request to create one).' },
);

export const AuditProfileUpdate = Strict(
  'AuditProfileUpdate',
  {
    name: name(),
    branch_ref: branchRef(),
    expected_version: Version({ description: 'The profile version the client last read.' }),
    purpose: purpose(),
    source_scope: Type.Optional(AuditSourceScope),
  },
  { description: 'Request to replace an audit profile.' },
);

export const AuditProfileResponse = Strict(
  'AuditProfileResponse',
  {
    name: name(),
    branch_ref: branchRef(),
    ...WorkspaceRecord,
    repository_id: Uuid(),
    created_by: Uuid(),
    version: Version({ description: 'Revision counter.' }),
    ...Timestamps,
    purpose: purpose(),
    source_scope: Type.Optional(AuditSourceScope),
  },
  { description: 'An audit profile.' },
);

export const AuditProfilePage = CursorPage('AuditProfilePage', AuditProfileResponse);

export const AuditProfileParams = ResourceParams('profile_id', 'The audit profile.');

// The static types of the schemas that code elsewhere names.
export type AuditProfileFields = Static<typeof AuditProfileFields>;
export type AuditProfileUpdate = Static<typeof AuditProfileUpdate>;
