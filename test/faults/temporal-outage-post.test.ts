/**
 * Fault: createAudit is sent with an Idempotency-Key while the Temporal server is down. The
 * audit is recorded, the answer is 503 naming it, and it stays queued, bound to the key; once
 * Temporal is back, the client's retry with the same key starts that very audit: one audit per
 * key, completed, no failed stray.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { Connection } from '@temporalio/client';
import { startAuditHarness, waitForAudit, type AuditHarness } from '../helpers/audit-harness';
import {
  ensureTemporalCli,
  startTemporalDevServer,
  type DevTemporal,
} from '../../platform/dev-services';
import { ensureSearchAttributes } from '../../platform/temporal';
import { portOutsideEphemeralRange } from '../helpers/processes';
import { call } from '../helpers/http';
import { makeWorld, type World } from './support';

const CLI = ensureTemporalCli(path.resolve(__dirname, '..', '..', '.tools'));
let dir: string;
let port: number;
let temporal: DevTemporal;
let h: AuditHarness;
let w: World;

const startServer = () =>
  startTemporalDevServer({
    cli: CLI,
    port,
    uiPort: null,
    dbFile: path.join(dir, 'temporal.db'),
    logFile: path.join(dir, 'temporal.log'),
  });

test.before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'archaudit-fault-post-'));
  port = await portOutsideEphemeralRange();
  temporal = await startServer();
  const connection = await Connection.connect({ address: temporal.address });
  await ensureSearchAttributes(connection, 'default');
  await connection.close();
  process.env.TEMPORAL_ADDRESS = temporal.address;
  h = await startAuditHarness({ config: { temporalAddress: temporal.address } });
  w = await makeWorld(h);
});

test.after.always(async () => {
  await h?.close();
  await temporal?.stop();
  w?.repo.remove();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a keyed createAudit during a Temporal outage, retried with its key once it is back: one audit, completed', async (t) => {
  const post = () =>
    call(w.url, 'POST', `${w.ws}/audits`, {
      token: w.tenant.token,
      headers: { 'Idempotency-Key': 'outage-post-1' },
      body: { repository_id: w.repositoryId },
    });
  await temporal.stop();
  const during = await post();
  t.is(during.status, 503, during.text);
  t.is(during.body.code, 'workflow_engine_unavailable');
  const id = during.body.audit_id as string;
  t.truthy(id);
  const held = await call(w.url, 'GET', `${w.ws}/audits/${id}`, { token: w.tenant.token });
  t.is(held.body.status, 'queued', 'the audit waits for its retry, it is not failed');

  temporal = await startServer();
  // The client retries until answered (the API reconnects to Temporal on its next call).
  let retry = await post();
  for (let i = 0; i < 20 && retry.status === 503; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    retry = await post();
  }
  t.is(retry.status, 202, retry.text);
  t.is(retry.body.id, id, 'the retry starts the same audit');
  const done = await waitForAudit(w.url, w.tenant.token, w.tenant.workspaceId, id, 180_000);
  t.is(done.body.status, 'completed');
  const audits = await h.app.services.db('audits').where({ workspace_id: w.tenant.workspaceId });
  t.is(audits.length, 1, 'one audit for the key, no failed stray');
  const replay = await post();
  t.is(replay.status, 202);
  t.is(replay.body.id, id);
});
