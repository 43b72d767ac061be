/**
 * Replay fixtures of the current workflow code. `RECORD_HISTORIES=1 npm test -- test/audits.test.ts
 * test/decision-flow.test.ts test/assistant.test.ts test/remediations.test.ts
 * test/workflow-actions.test.ts` rewrites test/fixtures/histories/*.binpb from real runs (a
 * completed and a failed audit, a decision taken to verified, an assistant run answered by the
 * model and one failed, a remediation verified, a workflow action executed); test/replay.test.ts
 * replays them. Record them again only when a released workflow version is retired
 * (docs/decisions.md, workflow versioning).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

export const HISTORY_FIXTURES = path.join(__dirname, '..', 'fixtures', 'histories');

export async function recordHistory(client: Client, workflowId: string, name: string) {
  if (!process.env.RECORD_HISTORIES) return;
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  fs.mkdirSync(HISTORY_FIXTURES, { recursive: true });
  fs.writeFileSync(
    path.join(HISTORY_FIXTURES, `${name}.binpb`),
    temporal.api.history.v1.History.encode(history).finish(),
  );
}
