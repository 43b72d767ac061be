/** The custom search attributes operators filter audits by in the Temporal UI. */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const WORKSPACE_ID = defineSearchAttributeKey('WorkspaceId', SearchAttributeType.KEYWORD);
export const REPOSITORY_ID = defineSearchAttributeKey('RepositoryId', SearchAttributeType.KEYWORD);
export const AUDIT_STATUS = defineSearchAttributeKey('AuditStatus', SearchAttributeType.KEYWORD);
