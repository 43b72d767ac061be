/**
 * Audits started by an earlier version of AuditWorkflow must finish under the current one: their
 * histories replay without nondeterminism. The fixtures are histories recorded from that version
 * (stage bookkeeping in local activities, before the `stage-marks-in-activities` patch), encoded
 * as temporal.api.history.v1.History protobuf: one audit that completed with a skipped stage
 * (source_types code and cloud) and one that failed at the source stage (unknown branch).
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';

const workflowsPath = require.resolve('../workflows');

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
