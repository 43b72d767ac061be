/**
 * Workflows started by an earlier version of our code must finish under the current one: their
 * histories replay without nondeterminism. The fixtures are histories recorded from those
 * versions, encoded as temporal.api.history.v1.History protobuf:
 * - AuditWorkflow before the `stage-marks-in-activities` patch (stage bookkeeping in local
 *   activities): one audit that completed with a skipped stage (source_types code and cloud) and
 *   one that failed at the source stage (unknown branch);
 * - DecisionWorkflow before the `decision-continue-as-new` patch: a decision taken through
 *   review (with reminders every second), approval and implementation.
 * The tests run one at a time: replay workers created while another test blocks the event loop
 * (spawnSync of the bundler) failed to start.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';

const workflowsPath = require.resolve('../workflows');
const FIXTURES = ['legacy-audit-completed', 'legacy-audit-failed', 'legacy-decision-implemented'];
const historyOf = (name: string) =>
  temporal.api.history.v1.History.decode(
    fs.readFileSync(path.join(__dirname, 'fixtures/histories', `${name}.binpb`)),
  );

test.serial(
  'a decision of the previous workflow version replays under the current one',
  async (t) => {
    const history = historyOf('legacy-decision-implemented');
    const updates = history.events.filter(
      (e) =>
        e.eventType ===
        temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED,
    );
    t.is(updates.length, 3, 'in_review, approved, implemented');
    await t.notThrowsAsync(Worker.runReplayHistory({ workflowsPath }, history));
  },
);

for (const name of ['completed', 'failed']) {
  test.serial(
    `a ${name} audit of the previous workflow version replays under the current one`,
    async (t) => {
      const history = historyOf(`legacy-audit-${name}`);
      const types = history.events.map((e) => e.eventType);
      t.true(
        types.includes(temporal.api.enums.v1.EventType.EVENT_TYPE_MARKER_RECORDED),
        'has local activities',
      );
      await t.notThrowsAsync(Worker.runReplayHistory({ workflowsPath }, history));
    },
  );
}

test.serial(
  'the production bundle (npm run bundle:workflows) holds the same workflows: every fixture replays with it',
  async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'archaudit-bundle-'));
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'workflow-bundle.js');
    const out = spawnSync('npm', ['run', '--silent', 'bundle:workflows', '--', file], {
      cwd: path.join(__dirname, '..'),
      encoding: 'utf8',
    });
    t.is(out.status, 0, out.stderr);
    t.true(fs.statSync(file).size > 0);
    for (const name of FIXTURES)
      await t.notThrowsAsync(
        Worker.runReplayHistory({ workflowBundle: { codePath: file } }, historyOf(name)),
        name,
      );
  },
);
