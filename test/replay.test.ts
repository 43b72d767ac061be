/**
 * Workflows recorded from the current code replay under it without nondeterminism, with the
 * development sources and with the production bundle. The fixtures (test/helpers/histories.ts
 * records them) are temporal.api.history.v1.History protobuf: an audit that completed (one stage
 * skipped), an audit that failed at the source stage (unknown branch), a decision taken
 * through review, approval and implementation to verified by a later audit, two assistant runs
 * (answered by the model through a tool call; failed after the model's retries), a remediation
 * drafted by the model, approved, started, done and verified by a later audit, and a workflow
 * action approved and executed. From the first
 * release on they are kept as they are, with those of each released version beside them, so a
 * change that breaks a running workflow fails here (docs/decisions.md, workflow versioning).
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
import { HISTORY_FIXTURES } from './helpers/histories';

const workflowsPath = require.resolve('../workflows');
const EventType = temporal.api.enums.v1.EventType;
const FIXTURES = [
  'audit-completed',
  'audit-failed',
  'decision-verified',
  'assistant-model-answer',
  'assistant-failed',
  'remediation-verified',
  'workflow-action-executed',
];
const historyOf = (name: string) =>
  temporal.api.history.v1.History.decode(
    fs.readFileSync(path.join(HISTORY_FIXTURES, `${name}.binpb`)),
  );
const typesOf = (name: string) => historyOf(name).events.map((e) => e.eventType);

test.serial('the fixtures are what they say they are', (t) => {
  t.deepEqual(fs.readdirSync(HISTORY_FIXTURES).sort(), FIXTURES.map((n) => `${n}.binpb`).sort());
  t.true(typesOf('audit-completed').includes(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED));
  const failed = historyOf('audit-failed').events.find(
    (e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
  );
  t.truthy(failed, 'a failed audit completes its workflow with status failed');
  const updates = historyOf('decision-verified').events.filter(
    (e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED,
  );
  t.is(updates.length, 3, 'in_review, approved, implemented');
  t.true(
    typesOf('decision-verified').includes(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED),
    'the snapshot signal that led to verification',
  );
  const updatesOf = (name: string) =>
    historyOf(name).events.filter(
      (e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED,
    ).length;
  t.is(updatesOf('remediation-verified'), 3, 'approved, in_progress, done');
  t.true(
    typesOf('remediation-verified').includes(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED),
    'the audit signal that led to verification',
  );
  t.is(updatesOf('workflow-action-executed'), 1, 'the approval');
});

for (const name of FIXTURES) {
  test.serial(`${name} replays under the current workflow code`, async (t) => {
    await t.notThrowsAsync(Worker.runReplayHistory({ workflowsPath }, historyOf(name)));
  });
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
