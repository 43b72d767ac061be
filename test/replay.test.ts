/**
 * Workflows started by an earlier version of our code must finish under the current one: their
 * histories replay without nondeterminism. The fixtures are histories recorded from those
 * versions, encoded as temporal.api.history.v1.History protobuf:
 * - AuditWorkflow before the `stage-marks-in-activities` patch (stage bookkeeping in local
 *   activities): one audit that completed with a skipped stage (source_types code and cloud) and
 *   one that failed at the source stage (unknown branch);
 * - DecisionWorkflow before the `decision-continue-as-new` patch: a decision taken through
 *   review (with reminders every second), approval and implementation.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';

const workflowsPath = require.resolve('../workflows');

test('a decision of the previous workflow version replays under the current one', async (t) => {
  const bytes = fs.readFileSync(
    path.join(__dirname, 'fixtures/histories', 'legacy-decision-implemented.binpb'),
  );
  const history = temporal.api.history.v1.History.decode(bytes);
  const updates = history.events.filter(
    (e) =>
      e.eventType ===
      temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED,
  );
  t.is(updates.length, 3, 'in_review, approved, implemented');
  await t.notThrowsAsync(Worker.runReplayHistory({ workflowsPath }, history));
});

for (const name of ['completed', 'failed']) {
  test(`a ${name} audit of the previous workflow version replays under the current one`, async (t) => {
    const bytes = fs.readFileSync(
      path.join(__dirname, 'fixtures/histories', `legacy-audit-${name}.binpb`),
    );
    const history = temporal.api.history.v1.History.decode(bytes);
    const types = history.events.map((e) => e.eventType);
    t.true(
      types.includes(temporal.api.enums.v1.EventType.EVENT_TYPE_MARKER_RECORDED),
      'has local activities',
    );
    await t.notThrowsAsync(Worker.runReplayHistory({ workflowsPath }, history));
  });
}
