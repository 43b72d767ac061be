/**
 * Parts of response schemas that many resource families share, each a thing a reader can name:
 * the identity of a workspace's record and its timestamps (field groups spread into an object,
 * in the order the contract lists them), the record of one approval, and the rationale a member
 * gives for one.
 */
import { approvalRecordFields } from './registry/approvals';
import { Type } from '@sinclair/typebox';
import { DateTime, Strict, Uuid } from './schema-kit';

/** The identity of a record of a workspace: its own id and its workspace's (spread first). */
export const WorkspaceRecord = { id: Uuid(), workspace_id: Uuid() };

/** When a record was created and last changed (spread last). */
export const Timestamps = { created_at: DateTime(), updated_at: DateTime() };

/** The named response of one approval or rejection of a `subject` (a decision, a remediation). */
export function ApprovalRecord(name: string, subject: string) {
  return Strict(name, approvalRecordFields(subject), {
    description: `One approval or rejection of a ${subject}.`,
  });
}

/**
 * Why a member moves, approves, rejects or excepts something, kept with the record: 3 to 4,000
 * characters.
 */
export const Rationale = (description?: string) =>
  Type.String({ minLength: 3, maxLength: 4000, ...(description ? { description } : {}) });
