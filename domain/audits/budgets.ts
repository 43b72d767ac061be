/**
 * Per-audit analysis budgets (issue 24): how much one audit may make the worker do, so that a
 * hostile repository ends in a clear result instead of holding the analysis threads for half an
 * hour or crashing them. Each budget ends the audit one of two ways, both stated to the user:
 *
 * - files: the files past the budget are not read; the audit goes on, with a coverage gap naming
 *   the budget, and its snapshot is `partial` (what was read is still true);
 * - analysis time, evidence, entities, output size: the audit ends `failed` with the budget's
 *   stable error code. A graph cut at an arbitrary entity would look complete and be wrong, so
 *   there is no partial graph; and the overflow is deterministic (the same files give the same
 *   records), so the failure is not retried (a non-retryable ApplicationFailure).
 */

export interface AuditBudgets {
  /** Files of the source an audit reads (listed past this: not read, a gap says so). */
  maxFiles: number;
  /** Seconds from the start of the first analysis stage to the end of the last. */
  analysisSeconds: number;
  /** Evidence records one analyzer, or reconcile over all of them, may produce. */
  maxEvidence: number;
  /** Entities of the reconciled graph. */
  maxEntities: number;
  /** Bytes of JSON one agent's artifact may take. */
  maxOutputBytes: number;
}

/** The stable error codes of the budgets that fail an audit. */
export const BUDGET_ERROR_CODES = {
  analysisSeconds: 'analysis_time_budget_exceeded',
  maxEvidence: 'evidence_budget_exceeded',
  maxEntities: 'entity_budget_exceeded',
  maxOutputBytes: 'output_budget_exceeded',
} as const;

export interface BudgetOverflow {
  code: (typeof BUDGET_ERROR_CODES)[keyof typeof BUDGET_ERROR_CODES];
  message: string;
}

/** The coverage gap of a source whose files went past the files budget. */
export function filesBudgetGap(limit: number, unread: number): Record<string, unknown> {
  return {
    kind: 'budget',
    budget: 'files',
    reason: 'budget_exceeded',
    limit,
    message: `${unread} files beyond the audit's budget of ${limit} files (AUDIT_MAX_FILES) were not read`,
  };
}

/** Whether the audit's coverage gaps say a budget cut what it read (its snapshot is partial). */
export function budgetCut(gaps: ReadonlyArray<Record<string, unknown>>): boolean {
  return gaps.some((g) => g.kind === 'budget');
}

/** An artifact's evidence records and entities (a graph's): what its budgets count. */
export function countsOf(artifact: Record<string, unknown>): {
  evidence: number;
  entities: number;
} {
  const count = (v: unknown) => (Array.isArray(v) ? v.length : 0);
  return { evidence: count(artifact.evidence), entities: count(artifact.entities) };
}

/**
 * The budget an agent's artifact goes past, or null: its evidence records, its entities (a
 * graph's; both as countsOf counts them), then its size as JSON (`bytes`, measured by the caller
 * with jsonBytesUpTo, or exactly when the artifact is JSON text already). At the limit is within
 * the budget.
 */
export function artifactOverflow(
  { evidence, entities }: { evidence: number; entities: number },
  bytes: number,
  budgets: Pick<AuditBudgets, 'maxEvidence' | 'maxEntities' | 'maxOutputBytes'>,
): BudgetOverflow | null {
  if (evidence > budgets.maxEvidence)
    return {
      code: BUDGET_ERROR_CODES.maxEvidence,
      message: `the analysis produced ${evidence} evidence records, over the audit's budget of ${budgets.maxEvidence} (AUDIT_MAX_EVIDENCE)`,
    };
  if (entities > budgets.maxEntities)
    return {
      code: BUDGET_ERROR_CODES.maxEntities,
      message: `the architecture graph has ${entities} entities, over the audit's budget of ${budgets.maxEntities} (AUDIT_MAX_ENTITIES)`,
    };
  if (bytes > budgets.maxOutputBytes)
    return {
      code: BUDGET_ERROR_CODES.maxOutputBytes,
      message: `an analysis result of ${bytes} bytes is over the audit's budget of ${budgets.maxOutputBytes} bytes (AUDIT_MAX_OUTPUT_BYTES)`,
    };
  return null;
}

/** The analysis-time overflow, once `elapsedMs` since the analysis started is past the budget. */
export function timeOverflow(elapsedMs: number, analysisSeconds: number): BudgetOverflow | null {
  if (elapsedMs <= analysisSeconds * 1000) return null;
  return {
    code: BUDGET_ERROR_CODES.analysisSeconds,
    message: `the analysis ran past the audit's budget of ${analysisSeconds} s (AUDIT_ANALYSIS_SECONDS)`,
  };
}

/**
 * The bytes `value` takes as JSON, counted without building the text and given up once past
 * `limit` (then some number above it): a result of hundreds of megabytes is refused before it is
 * serialized, instead of exhausting the worker's heap. Exact for JSON whose strings need no
 * escapes; escapes are not counted (a lower bound). Iterative: nesting cannot overflow the stack.
 */
export function jsonBytesUpTo(value: unknown, limit: number): number {
  let bytes = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && bytes <= limit) {
    const v = stack.pop();
    if (typeof v === 'string') bytes += Buffer.byteLength(v) + 2;
    else if (typeof v === 'number') bytes += Number.isFinite(v) ? String(v).length : 4;
    else if (typeof v === 'boolean') bytes += v ? 4 : 5;
    else if (v === null || v === undefined) bytes += 4;
    else if (Array.isArray(v)) {
      bytes += 2 + Math.max(0, v.length - 1);
      for (const item of v) stack.push(item);
    } else if (typeof v === 'object') {
      const entries = Object.entries(v as Record<string, unknown>).filter(
        ([, x]) => x !== undefined && typeof x !== 'function',
      );
      bytes += 2 + Math.max(0, entries.length - 1);
      for (const [k, x] of entries) {
        bytes += Buffer.byteLength(k) + 3;
        stack.push(x);
      }
    }
  }
  return bytes;
}
