/**
 * Fault: the Temporal server (a dev server of this test's own, persisting to a file) is stopped
 * while three audits are in flight and started again 5 s later on the same port. The worker and
 * the API reconnect; every audit completes, nothing is recorded twice, and each snapshot equals
 * the one a fault-free audit of the same commit made.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { Connection } from '@temporalio/client';
import { startAuditHarness, type AuditHarness } from '../helpers/audit-harness';
import {
  ensureTemporalCli,
  startTemporalDevServer,
  type DevTemporal,
} from '../../platform/dev-services';
import { ensureSearchAttributes } from '../../platform/temporal';
import { portOutsideEphemeralRange } from '../helpers/processes';
import {
  auditsInFlight,
  checkInvariants,
  faultFreeSnapshot,
  makeWorld,
  waitAll,
  type World,
} from './support';

/** The Temporal CLI as `npm test` finds it: on PATH, else in .tools. */
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
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'archaudit-fault-temporal-'));
  port = await portOutsideEphemeralRange();
  temporal = await startServer();
  const connection = await Connection.connect({ address: temporal.address });
  await ensureSearchAttributes(connection, 'default');
  await connection.close();
  // This file's harness (API and worker) uses the server this test restarts.
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

test('Temporal restarted mid-audit: every audit completes once, snapshots as without the fault', async (t) => {
  const expected = await faultFreeSnapshot(w);

  const ids = await auditsInFlight(w);
  await temporal.stop();
  await new Promise((r) => setTimeout(r, 5000));
  temporal = await startServer();
  await waitAll(w, ids);
  await checkInvariants(t, w, expected);
});
