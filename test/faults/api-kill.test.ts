/**
 * Fault: the API process is SIGKILLed twice while four clients send 16 idempotent createAudit
 * requests (each retried until answered, against whichever API process is up). Afterwards each
 * Idempotency-Key made exactly one audit, the recovery sweep leaves none queued, every audit
 * completes once and each snapshot equals the one a fault-free audit of the same commit made.
 */
import crypto from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import test from 'ava';
import { startAuditHarness, type AuditHarness } from '../helpers/audit-harness';
import { LOCAL_TEST_WORKSPACES } from '../helpers/factories';
import { call } from '../helpers/http';
import { spawnApi, stopProcess } from '../helpers/worker-process';
import { WORKFLOW_TYPES } from '../../domain/contract/workflows';
import { checkInvariants, faultFreeSnapshot, makeWorld, waitAll, type World } from './support';

let h: AuditHarness;
let w: World;
let api: { child: ChildProcess; url: string };

const startApiProcess = () =>
  spawnApi({
    DATABASE_URL: h.app.database.url,
    TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS,
    TEMPORAL_TASK_QUEUE: h.app.services.config.taskQueue,
    LOCAL_REPOSITORY_WORKSPACES: LOCAL_TEST_WORKSPACES,
    RATE_LIMIT_QUOTA: '1000000',
    // A retry takes over the claim of a request that died with its process after 2 s.
    IDEMPOTENCY_CLAIM_TIMEOUT_SECONDS: '2',
    IDEMPOTENCY_WAIT_MS: '500',
  });

test.before(async () => {
  h = await startAuditHarness();
  w = await makeWorld(h);
  api = await startApiProcess();
});

test.after.always(async () => {
  if (api) await stopProcess(api.child, 'SIGKILL');
  await h?.close();
  w?.repo.remove();
});

test('the API killed during idempotent POSTs: one audit per key, none stuck, snapshots as without the fault', async (t) => {
  const expected = await faultFreeSnapshot(w);

  const keys = Array.from({ length: 16 }, () => `fault-${crypto.randomUUID()}`);
  const answers = new Map<string, string>();
  /** Sends the key's request until an API process answers 202. */
  const send = async (key: string) => {
    for (;;) {
      try {
        const reply = await call(api.url, 'POST', `${w.ws}/audits`, {
          token: w.tenant.token,
          headers: { 'Idempotency-Key': key },
          body: { repository_id: w.repositoryId },
        });
        if (reply.status === 202) {
          answers.set(key, reply.body.id);
          return;
        }
      } catch {
        // the process died under the request
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const clients = [0, 1, 2, 3].map(async (c) => {
    for (const key of keys.slice(c * 4, c * 4 + 4)) await send(key);
  });
  const db = h.app.services.db;
  const audits = async () =>
    Number(
      (await db('audits').where({ workspace_id: w.tenant.workspaceId }).count('* as n'))[0]!.n,
    );
  for (const after of [4, 10]) {
    while ((await audits()) < after + 1) await new Promise((r) => setTimeout(r, 20));
    await stopProcess(api.child, 'SIGKILL');
    api = await startApiProcess();
  }
  await Promise.all(clients);

  // What the audit-recovery schedule does: start any audit whose start died with its process.
  const client = await h.app.services.temporal.client();
  await client.workflow.execute(WORKFLOW_TYPES.auditRecovery, {
    taskQueue: h.app.services.config.taskQueue,
    workflowId: `recovery-${crypto.randomUUID()}`,
    args: [{ graceSeconds: 0 }],
  });
  t.is(answers.size, 16);
  t.is(new Set(answers.values()).size, 16, 'sixteen keys, sixteen audits');
  t.is(await audits(), 17, 'no audit beyond one per key (and the reference)');
  const claims = await db('idempotency_keys')
    .where({ workspace_id: w.tenant.workspaceId })
    .select('key', 'resource_id', 'state');
  t.true(claims.every((c) => c.state === 'completed' && answers.get(c.key) === c.resource_id));
  await waitAll(w, [...answers.values()]);
  await checkInvariants(t, w, expected);
});
