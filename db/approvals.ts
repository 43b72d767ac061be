/**
 * The store of the approval model (domain/approvals/model.ts): every approval row records the
 * same fields (actor, role, authorization scope, policy version, outcome, rationale) whichever
 * family's table holds it (decision_approvals, remediation_approvals, report_approvals; a
 * workflow action keeps its one decision on its row).
 */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { ApprovalRecord } from '../domain/approvals/model';
import { rowsBySubject } from './records';

export interface ApprovalRow extends ApprovalRecord {
  id: string;
  created_at: Date;
}

type ApprovalTable = 'decision_approvals' | 'remediation_approvals';

/** The approvals of each subject, oldest first. */
export function approvalsBySubject<Row extends ApprovalRow>(
  db: Knex,
  table: ApprovalTable,
  column: keyof Row & string,
  ids: readonly string[],
): Promise<Map<string, Row[]>> {
  return rowsBySubject<Row>(db, table, column, ids);
}

export async function insertApprovalRow<Row extends ApprovalRow>(
  db: Knex,
  table: ApprovalTable,
  input: Omit<Row, 'id' | 'created_at'>,
): Promise<Row> {
  const [row] = await db(table)
    .insert({ id: crypto.randomUUID(), ...input })
    .returning('*');
  return row as Row;
}
